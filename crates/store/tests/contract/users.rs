//! Users of the admin web and API.

use std::sync::Arc;

use copytrace_store::{NewApiToken, NewSession, NewUser, Role, Store};

use crate::helpers::{at, contract_tests, invalid, not_found};

contract_tests!(
    user_email_lookup_ignores_case,
    duplicate_user_email_is_refused_regardless_of_case,
    a_rights_holder_user_belongs_to_exactly_one_rights_holder,
    a_user_of_an_unknown_rights_holder_is_not_found,
    users_are_listed_given_new_passwords_and_removed_by_email,
    a_session_finds_its_user_until_it_ends_or_the_user_goes,
    login_failures_are_counted_per_key_and_forgotten,
    an_api_token_finds_its_user_and_records_its_last_use,
    api_tokens_are_listed_and_revoked_by_their_own_user_only,
    an_api_token_goes_with_its_user,
);

const HASH: &str = "$argon2id$v=19$m=19456,t=2,p=1$c2FsdA$aGFzaA";

fn user(email: &str, role: Role, rights_holder_id: Option<i64>) -> NewUser {
    NewUser {
        email: email.to_owned(),
        password_hash: HASH.to_owned(),
        role,
        rights_holder_id,
    }
}

async fn user_email_lookup_ignores_case(store: Arc<dyn Store>) {
    let id = store
        .create_user(&user(" Alice@Example.COM ", Role::Admin, None))
        .await
        .unwrap();

    for email in [
        "alice@example.com",
        "ALICE@EXAMPLE.COM",
        "Alice@example.com",
    ] {
        let found = store.find_user_by_email(email).await.unwrap().expect(email);
        assert_eq!(found.id, id);
        assert_eq!(found.email, "alice@example.com", "stored lower-cased");
        assert_eq!(found.password_hash, HASH);
        assert_eq!(found.role, Role::Admin);
        assert_eq!(found.rights_holder_id, None);
    }
    assert_eq!(
        store.find_user_by_email("bob@example.com").await.unwrap(),
        None
    );
    assert_eq!(
        store.find_user_by_email("not an address").await.unwrap(),
        None
    );
}

async fn duplicate_user_email_is_refused_regardless_of_case(store: Arc<dyn Store>) {
    store
        .create_user(&user("carol@example.com", Role::Analyst, None))
        .await
        .unwrap();
    let why = invalid(
        store
            .create_user(&user("CAROL@example.com", Role::Operator, None))
            .await,
    );
    assert!(why.contains("already exists"), "{why}");
    let kept = store
        .find_user_by_email("carol@example.com")
        .await
        .unwrap()
        .unwrap();
    assert_eq!(kept.role, Role::Analyst);
}

async fn a_rights_holder_user_belongs_to_exactly_one_rights_holder(store: Arc<dyn Store>) {
    let holder = store.ensure_rights_holder("Yuewen").await.unwrap();
    invalid(
        store
            .create_user(&user("rh@yuewen.example", Role::RightsHolder, None))
            .await,
    );
    invalid(
        store
            .create_user(&user("admin@yuewen.example", Role::Admin, Some(holder)))
            .await,
    );
    invalid(
        store
            .create_user(&user("no-at-sign", Role::Admin, None))
            .await,
    );

    store
        .create_user(&user("rh@yuewen.example", Role::RightsHolder, Some(holder)))
        .await
        .unwrap();
    let found = store
        .find_user_by_email("RH@yuewen.example")
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        (found.role, found.rights_holder_id),
        (Role::RightsHolder, Some(holder))
    );
    assert_eq!(
        store
            .find_user_by_email("admin@yuewen.example")
            .await
            .unwrap(),
        None
    );
}

async fn a_user_of_an_unknown_rights_holder_is_not_found(store: Arc<dyn Store>) {
    let result = store
        .create_user(&user("rh@nowhere.example", Role::RightsHolder, Some(12)))
        .await;
    assert_eq!(not_found(result), "rights holder 12");
}

async fn users_are_listed_given_new_passwords_and_removed_by_email(store: Arc<dyn Store>) {
    store
        .create_user(&user("bob@example.com", Role::Analyst, None))
        .await
        .unwrap();
    store
        .create_user(&user("alice@example.com", Role::Admin, None))
        .await
        .unwrap();
    let emails: Vec<String> = store
        .list_users()
        .await
        .unwrap()
        .into_iter()
        .map(|u| u.email)
        .collect();
    assert_eq!(emails, ["alice@example.com", "bob@example.com"]);

    store
        .set_user_password(" BOB@example.com", "$argon2id$new")
        .await
        .unwrap();
    let bob = store
        .find_user_by_email("bob@example.com")
        .await
        .unwrap()
        .unwrap();
    assert_eq!(bob.password_hash, "$argon2id$new");
    let alice = store
        .find_user_by_email("alice@example.com")
        .await
        .unwrap()
        .unwrap();
    assert_eq!(alice.password_hash, HASH, "only that user's");
    not_found(store.set_user_password("carol@example.com", "x").await);

    store.remove_user("Bob@Example.com").await.unwrap();
    assert!(
        store
            .find_user_by_email("bob@example.com")
            .await
            .unwrap()
            .is_none()
    );
    not_found(store.remove_user("bob@example.com").await);
    not_found(store.remove_user("not an email").await);
    assert_eq!(store.list_users().await.unwrap().len(), 1);
}

fn session(token_hash: &str, user_id: i64, expires: i64) -> NewSession {
    NewSession {
        token_hash: token_hash.to_owned(),
        user_id,
        csrf_token: format!("csrf-{token_hash}"),
        created_at: at(0),
        expires_at: at(expires),
    }
}

async fn a_session_finds_its_user_until_it_ends_or_the_user_goes(store: Arc<dyn Store>) {
    let holder = store.ensure_rights_holder("Yuewen").await.unwrap();
    let id = store
        .create_user(&user("rh@example.com", Role::RightsHolder, Some(holder)))
        .await
        .unwrap();
    store
        .create_session(&session("aaa", id, 100))
        .await
        .unwrap();
    store.create_session(&session("bbb", id, 50)).await.unwrap();

    let found = store.session("aaa", at(10)).await.unwrap().expect("live");
    assert_eq!(found.user.id, id);
    assert_eq!(found.user.rights_holder_id, Some(holder));
    assert_eq!(found.csrf_token, "csrf-aaa");
    assert_eq!(found.expires_at, at(100));
    assert!(
        store.session("aaa", at(100)).await.unwrap().is_none(),
        "ended"
    );
    assert!(store.session("zzz", at(10)).await.unwrap().is_none());

    assert_eq!(store.delete_expired_sessions(at(60)).await.unwrap(), 1);
    assert!(
        store.session("bbb", at(10)).await.unwrap().is_none(),
        "deleted"
    );
    store.delete_session("aaa").await.unwrap();
    assert!(store.session("aaa", at(10)).await.unwrap().is_none());
    store.delete_session("aaa").await.unwrap();

    store
        .create_session(&session("ccc", id, 100))
        .await
        .unwrap();
    store.remove_user("rh@example.com").await.unwrap();
    assert!(
        store.session("ccc", at(10)).await.unwrap().is_none(),
        "a removed user's sessions end with it"
    );
}

async fn login_failures_are_counted_per_key_and_forgotten(store: Arc<dyn Store>) {
    for seconds in [10, 20, 30] {
        store
            .record_login_failure("account:a@example.com", at(seconds))
            .await
            .unwrap();
    }
    store
        .record_login_failure("address:10.0.0.1", at(25))
        .await
        .unwrap();
    assert_eq!(
        store
            .login_failures_since("account:a@example.com", at(15))
            .await
            .unwrap(),
        2
    );
    assert_eq!(
        store
            .login_failures_since("address:10.0.0.1", at(0))
            .await
            .unwrap(),
        1
    );
    store
        .clear_login_failures("account:a@example.com", at(20))
        .await
        .unwrap();
    assert_eq!(
        store
            .login_failures_since("account:a@example.com", at(0))
            .await
            .unwrap(),
        0
    );
    assert_eq!(
        store
            .login_failures_since("address:10.0.0.1", at(0))
            .await
            .unwrap(),
        1,
        "another key's recent failures stay"
    );
    store.clear_login_failures("none", at(26)).await.unwrap();
    assert_eq!(
        store
            .login_failures_since("address:10.0.0.1", at(0))
            .await
            .unwrap(),
        0,
        "old failures are forgotten"
    );
}

fn api_token(user_id: i64, name: &str, token_hash: &str) -> NewApiToken {
    NewApiToken {
        user_id,
        name: name.to_owned(),
        token_hash: token_hash.to_owned(),
        created_at: at(0),
    }
}

async fn an_api_token_finds_its_user_and_records_its_last_use(store: Arc<dyn Store>) {
    let holder = store.ensure_rights_holder("Yuewen").await.unwrap();
    let id = store
        .create_user(&user("rh@example.com", Role::RightsHolder, Some(holder)))
        .await
        .unwrap();
    let token = store
        .create_api_token(&api_token(id, "report script", "hash-1"))
        .await
        .unwrap();
    let listed = store.list_api_tokens(id).await.unwrap();
    assert_eq!(listed.len(), 1);
    assert_eq!(
        (listed[0].id, listed[0].name.as_str(), listed[0].created_at),
        (token, "report script", at(0))
    );
    assert_eq!(listed[0].last_used_at, None, "not used yet");

    let found = store
        .api_token_user("hash-1", at(100))
        .await
        .unwrap()
        .expect("the token's user");
    assert_eq!(found.id, id);
    assert_eq!(found.rights_holder_id, Some(holder));
    assert_eq!(found.role, Role::RightsHolder);
    assert_eq!(
        store.list_api_tokens(id).await.unwrap()[0].last_used_at,
        Some(at(100))
    );
    // Within the minute the last use stays; later it moves.
    store.api_token_user("hash-1", at(130)).await.unwrap();
    assert_eq!(
        store.list_api_tokens(id).await.unwrap()[0].last_used_at,
        Some(at(100))
    );
    store.api_token_user("hash-1", at(200)).await.unwrap();
    assert_eq!(
        store.list_api_tokens(id).await.unwrap()[0].last_used_at,
        Some(at(200))
    );
    assert_eq!(
        store.api_token_user("unknown", at(300)).await.unwrap(),
        None
    );
    let why = invalid(
        store
            .create_api_token(&api_token(id, "copy", "hash-1"))
            .await,
    );
    assert!(why.contains("already exists"), "{why}");
    assert_eq!(
        not_found(
            store
                .create_api_token(&api_token(id + 1000, "nobody", "hash-2"))
                .await
        ),
        format!("user {}", id + 1000)
    );
}

async fn api_tokens_are_listed_and_revoked_by_their_own_user_only(store: Arc<dyn Store>) {
    let alice = store
        .create_user(&user("alice@example.com", Role::Admin, None))
        .await
        .unwrap();
    let bob = store
        .create_user(&user("bob@example.com", Role::Analyst, None))
        .await
        .unwrap();
    let first = store
        .create_api_token(&api_token(alice, "first", "a1"))
        .await
        .unwrap();
    let second = store
        .create_api_token(&api_token(alice, "second", "a2"))
        .await
        .unwrap();
    let bobs = store
        .create_api_token(&api_token(bob, "bob's", "b1"))
        .await
        .unwrap();
    let names = |tokens: Vec<copytrace_store::ApiToken>| {
        tokens.into_iter().map(|t| t.name).collect::<Vec<_>>()
    };
    assert_eq!(
        names(store.list_api_tokens(alice).await.unwrap()),
        ["first", "second"]
    );
    assert_eq!(names(store.list_api_tokens(bob).await.unwrap()), ["bob's"]);

    not_found(store.delete_api_token(bobs, alice).await);
    assert!(
        store.api_token_user("b1", at(0)).await.unwrap().is_some(),
        "another user cannot revoke bob's token"
    );
    store.delete_api_token(first, alice).await.unwrap();
    assert!(store.api_token_user("a1", at(0)).await.unwrap().is_none());
    assert!(store.api_token_user("a2", at(0)).await.unwrap().is_some());
    not_found(store.delete_api_token(first, alice).await);
    assert_eq!(
        names(store.list_api_tokens(alice).await.unwrap()),
        ["second"]
    );
    assert_ne!(second, first);
}

async fn an_api_token_goes_with_its_user(store: Arc<dyn Store>) {
    let id = store
        .create_user(&user("carol@example.com", Role::Operator, None))
        .await
        .unwrap();
    store
        .create_api_token(&api_token(id, "cron", "c1"))
        .await
        .unwrap();
    store.remove_user("carol@example.com").await.unwrap();
    assert!(store.api_token_user("c1", at(0)).await.unwrap().is_none());
    assert!(store.list_api_tokens(id).await.unwrap().is_empty());
}
