//! User accounts of the admin web and API: who may log in, with which role, and their
//! passwords, hashed with Argon2id (the store never sees a password).
//!
//! The CLI bootstraps accounts (`copytrace user add|list|passwd|rm`); the web logs users in with
//! [`authenticate`].
//!
//! **API tokens.** Scripts call the JSON API with a per-user token (`copytrace user token add`,
//! sent as `Authorization: Bearer ct_…`) that acts as its user, with the user's role and rights
//! holder. It is random like a session token, shown once when made, and stored only as its
//! SHA-256: a fast hash is enough for 244 random bits, where a password needs Argon2.

use argon2::Argon2;
use argon2::password_hash::{PasswordHash, PasswordHasher, PasswordVerifier, SaltString};
use chrono::{DateTime, Utc};
use copytrace_store::{ApiToken, Id, NewApiToken, NewSession, NewUser, Role, Session, Store, User};
use serde::Serialize;

use crate::error::{Result, ServiceError};

/// Shortest password accepted. Long enough that a guess-limited login is not the weak point.
pub const MIN_PASSWORD_CHARS: usize = 10;

/// Hashes a password with Argon2id and a random salt, as a PHC string.
pub fn hash_password(password: &str) -> Result<String> {
    if password.chars().count() < MIN_PASSWORD_CHARS {
        return Err(ServiceError::invalid(format!(
            "a password has at least {MIN_PASSWORD_CHARS} characters"
        )));
    }
    // 16 bytes from the operating system's generator (a version-4 UUID, 122 random bits).
    let salt = SaltString::encode_b64(uuid::Uuid::new_v4().as_bytes())
        .map_err(|e| ServiceError::invalid(format!("cannot salt the password: {e}")))?;
    Argon2::default()
        .hash_password(password.as_bytes(), &salt)
        .map(|hash| hash.to_string())
        .map_err(|e| ServiceError::invalid(format!("cannot hash the password: {e}")))
}

/// Whether `password` is the one `hash` was made from. A malformed hash verifies nothing.
pub fn verify_password(hash: &str, password: &str) -> bool {
    PasswordHash::new(hash).is_ok_and(|parsed| {
        Argon2::default()
            .verify_password(password.as_bytes(), &parsed)
            .is_ok()
    })
}

/// The user with `email` if `password` is theirs. An unknown email costs a hash like a known
/// one, so timing does not tell which emails have accounts.
pub async fn authenticate(store: &dyn Store, email: &str, password: &str) -> Result<Option<User>> {
    let user = store.find_user_by_email(email).await?;
    let hash = user
        .as_ref()
        .map_or(DUMMY_HASH, |u| u.password_hash.as_str());
    let valid = verify_password(hash, password);
    Ok(user.filter(|_| valid))
}

/// How long a web session lasts.
pub const SESSION_HOURS: i64 = 12;
/// Failed logins of one account, within [`LIMIT_WINDOW_MINUTES`], before its logins are refused.
pub const MAX_ACCOUNT_FAILURES: u64 = 5;
/// Failed logins from one address, within the window, before its logins are refused.
pub const MAX_ADDRESS_FAILURES: u64 = 20;
/// The window of the login limiter.
pub const LIMIT_WINDOW_MINUTES: i64 = 15;

/// What a login attempt came to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Login {
    /// Logged in: the cookie's token (given to the browser, never stored) and the session.
    Started {
        /// The session cookie's value.
        token: String,
        /// The session as stored.
        session: Session,
    },
    /// Wrong email or password (which one is not said).
    Refused,
    /// Too many failures for this account or address lately; the password was not checked.
    Limited,
}

/// Logs `email` in from `address`, limited per account and per address: after
/// [`MAX_ACCOUNT_FAILURES`] failures of an account or [`MAX_ADDRESS_FAILURES`] from an address
/// in [`LIMIT_WINDOW_MINUTES`], attempts are refused without checking the password.
pub async fn login(
    store: &dyn Store,
    email: &str,
    password: &str,
    address: &str,
    now: DateTime<Utc>,
) -> Result<Login> {
    let account = format!("account:{}", email.trim().to_lowercase());
    let address = format!("address:{address}");
    let since = now - chrono::Duration::minutes(LIMIT_WINDOW_MINUTES);
    if store.login_failures_since(&account, since).await? >= MAX_ACCOUNT_FAILURES
        || store.login_failures_since(&address, since).await? >= MAX_ADDRESS_FAILURES
    {
        return Ok(Login::Limited);
    }
    let Some(user) = authenticate(store, email, password).await? else {
        store.record_login_failure(&account, now).await?;
        store.record_login_failure(&address, now).await?;
        return Ok(Login::Refused);
    };
    store.clear_login_failures(&account, since).await?;
    let token = random_token();
    let new = NewSession {
        token_hash: copytrace_store::sha256_hex(token.as_bytes()),
        user_id: user.id,
        csrf_token: random_token(),
        created_at: now,
        expires_at: now + chrono::Duration::hours(SESSION_HOURS),
    };
    store.create_session(&new).await?;
    Ok(Login::Started {
        token,
        session: Session {
            token_hash: new.token_hash,
            csrf_token: new.csrf_token,
            expires_at: new.expires_at,
            user,
        },
    })
}

/// The live session of a cookie's token, with its user.
pub async fn session(
    store: &dyn Store,
    token: &str,
    now: DateTime<Utc>,
) -> Result<Option<Session>> {
    Ok(store
        .session(&copytrace_store::sha256_hex(token.as_bytes()), now)
        .await?)
}

/// Ends the session of a cookie's token.
pub async fn logout(store: &dyn Store, token: &str) -> Result<()> {
    Ok(store
        .delete_session(&copytrace_store::sha256_hex(token.as_bytes()))
        .await?)
}

/// 244 random bits from the operating system (two version-4 UUIDs), as 64 hex digits: session
/// and CSRF tokens.
pub fn random_token() -> String {
    format!(
        "{}{}",
        uuid::Uuid::new_v4().simple(),
        uuid::Uuid::new_v4().simple()
    )
}

/// A hash of a password nobody has, verified in place of a missing user's.
const DUMMY_HASH: &str = "$argon2id$v=19$m=19456,t=2,p=1$Y29weXRyYWNlZHVtbXk$3tBw0cEzv9CUQ5gPz8+S0ZfSx6oqjH7Ye2dJZ0rTgHM";

/// Creates an account. A `rights_holder` account names its holder; other roles name none.
pub async fn add_user(
    store: &dyn Store,
    email: &str,
    role: Role,
    rights_holder: Option<&str>,
    password: &str,
) -> Result<Id> {
    let rights_holder_id = match (role, rights_holder) {
        (Role::RightsHolder, Some(name)) => Some(crate::holders::find(store, name).await?.id),
        (Role::RightsHolder, None) => {
            return Err(ServiceError::invalid(
                "a rights_holder account names its rights holder (--rights-holder NAME)",
            ));
        }
        (_, Some(_)) => {
            return Err(ServiceError::invalid(format!(
                "only rights_holder accounts belong to a rights holder, not {}",
                role.as_str()
            )));
        }
        (_, None) => None,
    };
    let password_hash = hash_password(password)?;
    Ok(store
        .create_user(&NewUser {
            email: email.to_owned(),
            password_hash,
            role,
            rights_holder_id,
        })
        .await?)
}

/// Gives an account a new password.
pub async fn set_password(store: &dyn Store, email: &str, password: &str) -> Result<()> {
    let hash = hash_password(password)?;
    Ok(store.set_user_password(email, &hash).await?)
}

/// Removes an account.
pub async fn remove_user(store: &dyn Store, email: &str) -> Result<()> {
    Ok(store.remove_user(email).await?)
}

/// An account as listed (never its hash).
#[derive(Debug, Clone, Serialize)]
pub struct Account {
    /// The account.
    #[serde(flatten)]
    pub user: User,
    /// The name of its rights holder, for `rights_holder` accounts.
    pub rights_holder: Option<String>,
}

/// Every account, by email.
pub async fn list(store: &dyn Store) -> Result<Vec<Account>> {
    let holders = store.list_rights_holders().await?;
    Ok(store
        .list_users()
        .await?
        .into_iter()
        .map(|user| Account {
            rights_holder: user
                .rights_holder_id
                .and_then(|id| holders.iter().find(|h| h.id == id))
                .map(|h| h.name.clone()),
            user,
        })
        .collect())
}

/// What every API token starts with, so that one found in a log or a repository is recognisable
/// (and secret scanners can be taught it).
pub const API_TOKEN_PREFIX: &str = "ct_";
/// Longest name of an API token.
pub const MAX_TOKEN_NAME_CHARS: usize = 100;

/// The user with `email`, `NotFound` naming it when there is none.
async fn user_by_email(store: &dyn Store, email: &str) -> Result<User> {
    store
        .find_user_by_email(email)
        .await?
        .ok_or_else(|| copytrace_store::StoreError::NotFound(format!("user {email:?}")).into())
}

/// Makes an API token for the user with `email`, named `name` (what it is for); returns the
/// token, which is shown this once and never stored, and its id (by which it is revoked).
pub async fn create_api_token(store: &dyn Store, email: &str, name: &str) -> Result<(String, Id)> {
    let name = name.trim();
    if name.is_empty()
        || name.chars().count() > MAX_TOKEN_NAME_CHARS
        || name.chars().any(char::is_control)
    {
        return Err(ServiceError::invalid(format!(
            "a token's name says what it is for, in 1 to {MAX_TOKEN_NAME_CHARS} characters \
             without control characters"
        )));
    }
    let user = user_by_email(store, email).await?;
    let token = format!("{API_TOKEN_PREFIX}{}", random_token());
    let id = store
        .create_api_token(&NewApiToken {
            user_id: user.id,
            name: name.to_owned(),
            token_hash: copytrace_store::sha256_hex(token.as_bytes()),
            created_at: Utc::now(),
        })
        .await?;
    Ok((token, id))
}

/// The user an API token acts as, if it is a live one (recording its use).
pub async fn api_user(store: &dyn Store, token: &str) -> Result<Option<User>> {
    if !token.starts_with(API_TOKEN_PREFIX) {
        return Ok(None);
    }
    Ok(store
        .api_token_user(&copytrace_store::sha256_hex(token.as_bytes()), Utc::now())
        .await?)
}

/// The API tokens of the user with `email` (never the tokens themselves).
pub async fn list_api_tokens(store: &dyn Store, email: &str) -> Result<Vec<ApiToken>> {
    let user = user_by_email(store, email).await?;
    Ok(store.list_api_tokens(user.id).await?)
}

/// Revokes token `id` of the user with `email`; `NotFound` if it is not theirs.
pub async fn revoke_api_token(store: &dyn Store, email: &str, id: Id) -> Result<()> {
    let user = user_by_email(store, email).await?;
    Ok(store.delete_api_token(id, user.id).await?)
}

#[cfg(test)]
mod tests {
    use copytrace_store::sqlite::SqliteStore;

    use super::*;

    async fn store_with_admin() -> SqliteStore {
        let store = SqliteStore::connect("sqlite::memory:").await.unwrap();
        store.migrate().await.unwrap();
        add_user(
            &store,
            "admin@example.com",
            Role::Admin,
            None,
            "correct horse battery",
        )
        .await
        .unwrap();
        store
    }

    #[tokio::test]
    async fn a_login_starts_a_session_that_its_cookie_finds_until_logout() {
        let store = store_with_admin().await;
        let now = Utc::now();
        let Login::Started {
            token,
            session: started,
        } = login(
            &store,
            "Admin@Example.com",
            "correct horse battery",
            "10.0.0.1",
            now,
        )
        .await
        .unwrap()
        else {
            panic!("logged in");
        };
        assert_eq!(token.len(), 64);
        assert_ne!(started.token_hash, token, "only the hash is stored");
        let found = session(&store, &token, now).await.unwrap().expect("live");
        assert_eq!(found.user.email, "admin@example.com");
        assert_eq!(found.csrf_token, started.csrf_token);
        assert!(session(&store, "forged", now).await.unwrap().is_none());
        assert!(
            session(&store, &token, now + chrono::Duration::hours(SESSION_HOURS))
                .await
                .unwrap()
                .is_none(),
            "sessions end"
        );
        logout(&store, &token).await.unwrap();
        assert!(session(&store, &token, now).await.unwrap().is_none());
    }

    #[tokio::test]
    async fn the_limiter_holds_per_account_and_per_address() {
        let store = store_with_admin().await;
        let now = Utc::now();
        for _ in 0..MAX_ACCOUNT_FAILURES {
            assert_eq!(
                login(
                    &store,
                    "admin@example.com",
                    "wrong password",
                    "10.0.0.1",
                    now
                )
                .await
                .unwrap(),
                Login::Refused
            );
        }
        // The right password no longer helps this account, from any address, for a while.
        for address in ["10.0.0.1", "10.0.0.2"] {
            assert_eq!(
                login(
                    &store,
                    "admin@example.com",
                    "correct horse battery",
                    address,
                    now
                )
                .await
                .unwrap(),
                Login::Limited
            );
        }
        let later = now + chrono::Duration::minutes(LIMIT_WINDOW_MINUTES + 1);
        assert!(matches!(
            login(
                &store,
                "admin@example.com",
                "correct horse battery",
                "10.0.0.1",
                later
            )
            .await
            .unwrap(),
            Login::Started { .. }
        ));
        // One address guessing many accounts is stopped too.
        for n in 0..MAX_ADDRESS_FAILURES {
            let email = format!("guess{n}@example.com");
            login(&store, &email, "wrong password", "10.9.9.9", later)
                .await
                .unwrap();
        }
        assert_eq!(
            login(
                &store,
                "admin@example.com",
                "correct horse battery",
                "10.9.9.9",
                later
            )
            .await
            .unwrap(),
            Login::Limited
        );
    }

    #[tokio::test]
    async fn an_api_token_acts_as_its_user_until_revoked() {
        let store = store_with_admin().await;
        let (token, id) = create_api_token(&store, "ADMIN@example.com", " report script ")
            .await
            .unwrap();
        assert!(token.starts_with("ct_") && token.len() == 67, "{token}");
        let user = api_user(&store, &token).await.unwrap().expect("its user");
        assert_eq!(user.email, "admin@example.com");
        let listed = list_api_tokens(&store, "admin@example.com").await.unwrap();
        assert_eq!(listed.len(), 1);
        assert_eq!(
            (listed[0].id, listed[0].name.as_str()),
            (id, "report script")
        );
        assert!(listed[0].last_used_at.is_some(), "the use was recorded");
        assert!(api_user(&store, &token[3..]).await.unwrap().is_none());
        assert!(api_user(&store, "ct_forged").await.unwrap().is_none());
        for bad in [
            "",
            "   ",
            "tab\there",
            &"x".repeat(MAX_TOKEN_NAME_CHARS + 1),
        ] {
            let refused = create_api_token(&store, "admin@example.com", bad).await;
            assert_eq!(
                refused.unwrap_err().kind(),
                crate::ErrorKind::Invalid,
                "{bad:?}"
            );
        }
        let nobody = create_api_token(&store, "nobody@example.com", "x").await;
        assert_eq!(nobody.unwrap_err().kind(), crate::ErrorKind::NotFound);
        revoke_api_token(&store, "admin@example.com", id)
            .await
            .unwrap();
        assert!(api_user(&store, &token).await.unwrap().is_none());
        let again = revoke_api_token(&store, "admin@example.com", id).await;
        assert_eq!(again.unwrap_err().kind(), crate::ErrorKind::NotFound);
    }

    #[test]
    fn a_password_verifies_against_its_own_hash_only() {
        let hash = hash_password("correct horse battery").unwrap();
        assert!(hash.starts_with("$argon2id$"), "{hash}");
        assert!(verify_password(&hash, "correct horse battery"));
        assert!(!verify_password(&hash, "correct horse batterY"));
        assert!(!verify_password("not a hash", "correct horse battery"));
        assert_ne!(
            hash,
            hash_password("correct horse battery").unwrap(),
            "salted"
        );
        assert!(hash_password("short").is_err());
    }

    #[test]
    fn the_dummy_hash_parses_and_matches_no_empty_password() {
        assert!(PasswordHash::new(DUMMY_HASH).is_ok());
        assert!(!verify_password(DUMMY_HASH, ""));
    }
}
