//! User accounts of the admin web and API: who may log in, with which role, and their
//! passwords, hashed with Argon2id (the store never sees a password).
//!
//! The CLI bootstraps accounts (`copytrace user add|list|passwd|rm`); the web logs users in with
//! [`authenticate`].

use argon2::Argon2;
use argon2::password_hash::{PasswordHash, PasswordHasher, PasswordVerifier, SaltString};
use copytrace_store::{Id, NewUser, Role, Store, User};
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

#[cfg(test)]
mod tests {
    use super::*;

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
