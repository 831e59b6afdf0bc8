//! Rights holders: the owners of works (publishers, news agencies), so that each sees and acts
//! on its own works only.
//!
//! A single-tenant installation never has to name one: works added without a holder belong to
//! [`DEFAULT_RIGHTS_HOLDER`]. A holder is removed only once it owns no work and no user account,
//! so removing an owner never removes evidence as a side effect.

use chrono::{DateTime, Utc};
use copytrace_store::{
    Id, LicensedHost, RightsHolder, RightsHolderProfile, SignatureImage, Store, StoreError,
};
use serde::Serialize;

use crate::error::{Result, ServiceError};

/// The rights holder of works added without naming one.
pub const DEFAULT_RIGHTS_HOLDER: &str = "default";

/// A rights holder with the size of its catalog.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct HolderSummary {
    /// The holder.
    #[serde(flatten)]
    pub holder: RightsHolder,
    /// Works it owns.
    pub works: usize,
}

/// Registers a rights holder (nothing changes if it exists); returns it as stored.
pub async fn add(store: &dyn Store, name: &str) -> Result<RightsHolder> {
    let id = store.ensure_rights_holder(name).await?;
    store
        .list_rights_holders()
        .await?
        .into_iter()
        .find(|holder| holder.id == id)
        .ok_or_else(|| ServiceError::unavailable(format!("rights holder {id} vanished")))
}

/// Every rights holder, by name, with the number of works it owns.
pub async fn list(store: &dyn Store) -> Result<Vec<HolderSummary>> {
    // One listing of the library, counted per holder, rather than one query per holder.
    let mut owned: std::collections::HashMap<i64, usize> = std::collections::HashMap::new();
    for work in store.list_works(None).await? {
        *owned.entry(work.rights_holder_id).or_default() += 1;
    }
    Ok(store
        .list_rights_holders()
        .await?
        .into_iter()
        .map(|holder| HolderSummary {
            works: owned.get(&holder.id).copied().unwrap_or(0),
            holder,
        })
        .collect())
}

/// The names of every rights holder (what a form's choice of holder lists), without counting
/// their works as [`list`] does.
pub async fn names(store: &dyn Store) -> Result<Vec<String>> {
    let mut names: Vec<String> = store
        .list_rights_holders()
        .await?
        .into_iter()
        .map(|holder| holder.name)
        .collect();
    names.sort();
    Ok(names)
}

/// The rights holder with id `id`.
pub async fn get(store: &dyn Store, id: Id) -> Result<RightsHolder> {
    store
        .list_rights_holders()
        .await?
        .into_iter()
        .find(|holder| holder.id == id)
        .ok_or_else(|| StoreError::NotFound(format!("rights holder {id}")).into())
}

/// The rights holder called `name`.
pub async fn find(store: &dyn Store, name: &str) -> Result<RightsHolder> {
    store
        .list_rights_holders()
        .await?
        .into_iter()
        .find(|holder| holder.name == name.trim())
        .ok_or_else(|| StoreError::NotFound(format!("rights holder {:?}", name.trim())).into())
}

/// Removes the rights holder called `name`; refused while it owns works or user accounts.
pub async fn remove(store: &dyn Store, name: &str) -> Result<()> {
    let holder = find(store, name).await?;
    Ok(store.delete_rights_holder(holder.id).await?)
}

/// A host as a licence names it: `Partner.example`, `https://partner.example/books`,
/// `*.partner.example` and `partner.example:8080` all license `partner.example` and its
/// subdomains (on any port). Internationalized names become their ASCII (punycode) form, as
/// crawled URLs store them.
pub fn licensed_host(input: &str) -> Result<String> {
    let trimmed = input.trim();
    let without_wildcard = trimmed.strip_prefix("*.").unwrap_or(trimmed);
    let as_url = if without_wildcard.contains("://") {
        without_wildcard.to_owned()
    } else {
        format!("http://{without_wildcard}")
    };
    // The host as a crawled URL spells it, so that a stored licence reads back as itself: only
    // a web address normalizes its host (`e://80` would give `80`, which is `0.0.0.80`), a
    // name without its trailing dots is read again (`1..` is `0.0.0.1`, `a.0..` no host at
    // all), and a wildcard is only the leading `*.` (`*.*.x` would give `*.x`, then `x`).
    let host = url::Url::parse(&as_url)
        .ok()
        .filter(|url| matches!(url.scheme(), "http" | "https"))
        .and_then(|url| url.host_str().map(|h| h.trim_end_matches('.').to_owned()))
        .and_then(|h| url::Url::parse(&format!("http://{h}")).ok())
        .and_then(|url| url.host_str().map(str::to_owned))
        .filter(|h| !h.is_empty() && !h.contains(['[', ']', ':', '*']))
        .ok_or_else(|| {
            ServiceError::invalid(format!(
                "{input:?} is not a host name (expected something like partner.example)"
            ))
        })?;
    Ok(host)
}

/// Licenses hosts (and their subdomains) to publish the works of the holder called `name`: all
/// of them, or the work `work_id`. Returns the normalized hosts and how many were new.
pub async fn license(
    store: &dyn Store,
    name: &str,
    work_id: Option<Id>,
    hosts: &[String],
) -> Result<(Vec<String>, u64)> {
    let holder = find(store, name).await?;
    let hosts = hosts
        .iter()
        .map(|h| licensed_host(h))
        .collect::<Result<Vec<_>>>()?;
    let added = store.add_licensed_hosts(holder.id, work_id, &hosts).await?;
    Ok((hosts, added))
}

/// Takes back licences given by [`license`]; returns how many there were.
pub async fn unlicense(
    store: &dyn Store,
    name: &str,
    work_id: Option<Id>,
    hosts: &[String],
) -> Result<u64> {
    let holder = find(store, name).await?;
    let hosts = hosts
        .iter()
        .map(|h| licensed_host(h))
        .collect::<Result<Vec<_>>>()?;
    Ok(store
        .remove_licensed_hosts(holder.id, work_id, &hosts)
        .await?)
}

/// The licensed hosts of the holder called `name`, or of every holder.
pub async fn licenses(store: &dyn Store, name: Option<&str>) -> Result<Vec<LicensedHost>> {
    let holder = match name {
        Some(name) => Some(find(store, name).await?.id),
        None => None,
    };
    Ok(store.list_licensed_hosts(holder).await?)
}

// ----- profiles (issue 40) -----

/// The notice language of a profile set without one: most holders using Copytrace publish in
/// Chinese and notify Chinese sites.
pub const DEFAULT_PROFILE_LANGUAGE: &str = "zh";

/// Longest accepted profile text, in characters: a notice quotes these whole, so a pasted
/// document is refused rather than printed into every notice.
const MAX_FIELD_CHARS: usize = 500;

/// A change to a rights holder's profile ([`set_profile`]): each field that is `Some` replaces
/// the stored value (an empty text clears it), each `None` keeps it. So `rights-holder set`
/// with one flag changes one field, and a web form sends every field.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ProfileUpdate {
    /// Registered name.
    pub legal_name: Option<String>,
    /// Postal address (may span lines).
    pub address: Option<String>,
    /// Contact e-mail address.
    pub email: Option<String>,
    /// Contact telephone number.
    pub phone: Option<String>,
    /// The authorised agent's name.
    pub agent_name: Option<String>,
    /// The agent's role.
    pub agent_role: Option<String>,
    /// How to reach the agent.
    pub agent_contact: Option<String>,
    /// Signature line, as text.
    pub signature: Option<String>,
    /// Default notice language, `zh` or `en`.
    pub language: Option<String>,
}

/// A rights holder with its profile (`None` until one is set): what `rights-holder show`
/// prints.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct HolderProfile {
    /// The holder.
    pub holder: RightsHolder,
    /// Its profile.
    pub profile: Option<RightsHolderProfile>,
    /// Its signature image, when it has one (what it is, not its bytes).
    pub signature_image: Option<ImageInfo>,
}

/// What a stored signature image is.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ImageInfo {
    /// `image/png` or `image/jpeg`.
    pub content_type: String,
    /// Its size in bytes.
    pub bytes: usize,
}

/// Largest accepted signature image, in bytes: a scanned signature is a few kilobytes, and the
/// image travels inline in every notice mail.
pub const MAX_SIGNATURE_IMAGE_BYTES: usize = 200 * 1024;

/// A signature image as a profile keeps it: PNG or JPEG, told by its magic bytes (what the
/// file is, whatever its name or the browser says), at most [`MAX_SIGNATURE_IMAGE_BYTES`].
/// Anything else is refused, saying what was found.
pub fn parse_signature_image(bytes: Vec<u8>) -> Result<SignatureImage> {
    const PNG: &[u8] = b"\x89PNG\r\n\x1a\n";
    const JPEG: &[u8] = &[0xff, 0xd8, 0xff];
    if bytes.len() > MAX_SIGNATURE_IMAGE_BYTES {
        return Err(ServiceError::invalid(format!(
            "the signature image has {} bytes, more than the {} KB a signature may have",
            bytes.len(),
            MAX_SIGNATURE_IMAGE_BYTES / 1024
        )));
    }
    let content_type = if bytes.starts_with(PNG) {
        "image/png"
    } else if bytes.starts_with(JPEG) {
        "image/jpeg"
    } else if bytes.is_empty() {
        return Err(ServiceError::invalid("the signature image is empty"));
    } else {
        return Err(ServiceError::invalid(
            "the signature image is neither a PNG nor a JPEG file (checked by its first bytes)",
        ));
    };
    Ok(SignatureImage {
        content_type: content_type.to_owned(),
        bytes,
    })
}

/// Sets the signature image of holder `id` from a file's bytes ([`parse_signature_image`]), or
/// clears it with `None`; a holder without a profile gets one first (as [`set_profile_of`]
/// with no change). Returns what is stored.
pub async fn set_signature_image_of(
    store: &dyn Store,
    id: Id,
    bytes: Option<Vec<u8>>,
    at: DateTime<Utc>,
) -> Result<Option<ImageInfo>> {
    let image = bytes.map(parse_signature_image).transpose()?;
    if store.rights_holder_profile(id).await?.is_none() {
        set_profile_of(store, id, &ProfileUpdate::default(), at).await?;
    }
    store.set_signature_image(id, image.as_ref()).await?;
    Ok(image.as_ref().map(info))
}

/// [`set_signature_image_of`] for the holder called `name`.
pub async fn set_signature_image(
    store: &dyn Store,
    name: &str,
    bytes: Option<Vec<u8>>,
    at: DateTime<Utc>,
) -> Result<Option<ImageInfo>> {
    let holder = find(store, name).await?;
    set_signature_image_of(store, holder.id, bytes, at).await
}

/// The signature image of holder `id`, if it has one.
pub async fn signature_image_of(store: &dyn Store, id: Id) -> Result<Option<SignatureImage>> {
    Ok(store.signature_image(id).await?)
}

fn info(image: &SignatureImage) -> ImageInfo {
    ImageInfo {
        content_type: image.content_type.clone(),
        bytes: image.bytes.len(),
    }
}

/// An e-mail address as a profile keeps it, trimmed; refused (naming the value) unless it has
/// the form `local@domain.tld`. Not a full RFC 5322 parser: a notice's reader must be able to
/// write to it, so quoted locals, comments and display names are refused too.
pub fn parse_email(input: &str) -> Result<String> {
    let email = input.trim();
    let refuse = || {
        ServiceError::invalid(format!(
            "email {input:?} is not an e-mail address (expected something like \
             legal@publisher.example)"
        ))
    };
    let (local, domain) = email.split_once('@').ok_or_else(refuse)?;
    let local_ok = !local.is_empty()
        && !local.starts_with('.')
        && !local.ends_with('.')
        && !local.contains("..")
        && local
            .chars()
            .all(|c| c.is_alphanumeric() || "!#$%&'*+-/=?^_`{|}~.".contains(c));
    let labels: Vec<&str> = domain.split('.').collect();
    let domain_ok = labels.len() >= 2
        && labels.iter().all(|label| {
            !label.is_empty()
                && !label.starts_with('-')
                && !label.ends_with('-')
                && label.chars().all(|c| c.is_alphanumeric() || c == '-')
        });
    if local_ok && domain_ok {
        Ok(email.to_owned())
    } else {
        Err(refuse())
    }
}

/// A notice language as a profile keeps it: `zh` or `en` (any case); refused otherwise.
pub fn parse_language(input: &str) -> Result<String> {
    let language = input.trim().to_ascii_lowercase();
    if matches!(language.as_str(), "zh" | "en") {
        Ok(language)
    } else {
        Err(ServiceError::invalid(format!(
            "language {input:?} is not a notice language: use zh (Chinese notice under \
             《信息网络传播权保护条例》) or en (US notice under 17 U.S.C. §512(c)(3))"
        )))
    }
}

/// A telephone number: digits with the usual separators (`+86 21-1234 5678`, `(555) 123.4567
/// ext. 9`), at least five digits; refused otherwise, so a notice never gives a number no one
/// can dial.
pub fn parse_phone(input: &str) -> Result<String> {
    let phone = input.trim();
    let digits = phone.chars().filter(char::is_ascii_digit).count();
    let rest = phone
        .to_ascii_lowercase()
        .replace("ext.", "")
        .replace("ext", "")
        .replace('x', "");
    if digits >= 5
        && rest
            .chars()
            .all(|c| c.is_ascii_digit() || " +-()./".contains(c))
    {
        Ok(phone.to_owned())
    } else {
        Err(ServiceError::invalid(format!(
            "phone {input:?} is not a telephone number (expected digits, spaces and + - ( ) . \
             only, e.g. +86 21 1234 5678)"
        )))
    }
}

/// A free profile text: trimmed, at most [`MAX_FIELD_CHARS`] characters, without control
/// characters (line breaks are allowed in the address only, which is printed on several lines).
fn profile_text(field: &str, input: &str, multiline: bool) -> Result<String> {
    let text = input.trim();
    if text.chars().count() > MAX_FIELD_CHARS {
        return Err(ServiceError::invalid(format!(
            "{field} is longer than {MAX_FIELD_CHARS} characters"
        )));
    }
    if text
        .chars()
        .any(|c| c.is_control() && !(multiline && (c == '\n' || c == '\r' || c == '\t')))
    {
        return Err(ServiceError::invalid(format!(
            "{field} contains control characters{}",
            if multiline {
                ""
            } else {
                " (a line break is allowed in the address only)"
            }
        )));
    }
    Ok(text.to_owned())
}

/// Applies `update` to `current` (the stored profile, or an empty one for `holder_id`),
/// checking every given field; the first refusal names its field and value.
fn apply_update(
    holder_id: Id,
    current: Option<RightsHolderProfile>,
    update: &ProfileUpdate,
    at: DateTime<Utc>,
) -> Result<RightsHolderProfile> {
    let mut profile = current.unwrap_or_else(|| RightsHolderProfile {
        rights_holder_id: holder_id,
        legal_name: None,
        address: None,
        email: None,
        phone: None,
        agent_name: None,
        agent_role: None,
        agent_contact: None,
        signature: None,
        language: DEFAULT_PROFILE_LANGUAGE.to_owned(),
        updated_at: at,
    });
    // Each given field: an empty text clears it, anything else is checked by its own rule.
    let set = |slot: &mut Option<String>,
               given: &Option<String>,
               check: &dyn Fn(&str) -> Result<String>|
     -> Result<()> {
        if let Some(value) = given {
            *slot = if value.trim().is_empty() {
                None
            } else {
                Some(check(value)?)
            };
        }
        Ok(())
    };
    set(&mut profile.legal_name, &update.legal_name, &|v| {
        profile_text("legal name", v, false)
    })?;
    set(&mut profile.address, &update.address, &|v| {
        profile_text("address", v, true)
    })?;
    set(&mut profile.email, &update.email, &parse_email)?;
    set(&mut profile.phone, &update.phone, &parse_phone)?;
    set(&mut profile.agent_name, &update.agent_name, &|v| {
        profile_text("agent name", v, false)
    })?;
    set(&mut profile.agent_role, &update.agent_role, &|v| {
        profile_text("agent role", v, false)
    })?;
    set(&mut profile.agent_contact, &update.agent_contact, &|v| {
        profile_text("agent contact", v, false)
    })?;
    set(&mut profile.signature, &update.signature, &|v| {
        profile_text("signature", v, false)
    })?;
    if let Some(language) = &update.language {
        profile.language = parse_language(language)?;
    }
    profile.updated_at = at;
    Ok(profile)
}

/// Changes the profile of the rights holder called `name` (see [`ProfileUpdate`]); a holder
/// without one gets one, in [`DEFAULT_PROFILE_LANGUAGE`] unless the update names a language.
/// Every given field is checked before anything is written. Returns the stored profile.
pub async fn set_profile(
    store: &dyn Store,
    name: &str,
    update: &ProfileUpdate,
    at: DateTime<Utc>,
) -> Result<RightsHolderProfile> {
    let holder = find(store, name).await?;
    set_profile_of(store, holder.id, update, at).await
}

/// [`set_profile`] for the holder with id `id` (what the web calls, knowing the tenant's id).
pub async fn set_profile_of(
    store: &dyn Store,
    id: Id,
    update: &ProfileUpdate,
    at: DateTime<Utc>,
) -> Result<RightsHolderProfile> {
    let current = store.rights_holder_profile(id).await?;
    let profile = apply_update(id, current, update, at)?;
    store.set_rights_holder_profile(&profile).await?;
    store
        .rights_holder_profile(id)
        .await?
        .ok_or_else(|| ServiceError::unavailable(format!("the profile of holder {id} vanished")))
}

/// The rights holder called `name` with its profile.
pub async fn profile(store: &dyn Store, name: &str) -> Result<HolderProfile> {
    let holder = find(store, name).await?;
    let profile = store.rights_holder_profile(holder.id).await?;
    let signature_image = store.signature_image(holder.id).await?.as_ref().map(info);
    Ok(HolderProfile {
        holder,
        profile,
        signature_image,
    })
}

#[cfg(test)]
mod tests {
    use copytrace_store::sqlite::SqliteStore;

    use super::*;
    use crate::ErrorKind;

    #[tokio::test]
    async fn holders_are_added_once_listed_with_their_works_and_removed_by_name() {
        let dir = tempfile::tempdir().unwrap();
        let url = format!("sqlite://{}", dir.path().join("t.db").display());
        let store = SqliteStore::connect(&url).await.unwrap();
        store.migrate().await.unwrap();

        let first = add(&store, "Yuewen").await.unwrap();
        assert_eq!(add(&store, " Yuewen ").await.unwrap(), first);
        add(&store, "Acme Books").await.unwrap();
        let listed: Vec<(String, usize)> = list(&store)
            .await
            .unwrap()
            .into_iter()
            .map(|s| (s.holder.name, s.works))
            .collect();
        assert_eq!(listed, [("Acme Books".into(), 0), ("Yuewen".into(), 0)]);

        remove(&store, "Acme Books").await.unwrap();
        let missing = remove(&store, "Acme Books").await.unwrap_err();
        assert_eq!(missing.kind(), ErrorKind::NotFound);
        assert!(missing.to_string().contains("Acme Books"), "{missing}");
    }

    #[tokio::test]
    async fn a_profile_is_set_field_by_field_and_bad_values_are_refused_by_name() {
        let dir = tempfile::tempdir().unwrap();
        let url = format!("sqlite://{}", dir.path().join("t.db").display());
        let store = SqliteStore::connect(&url).await.unwrap();
        store.migrate().await.unwrap();
        add(&store, "Yuewen").await.unwrap();
        assert_eq!(profile(&store, "Yuewen").await.unwrap().profile, None);

        let at = Utc::now();
        let first = set_profile(
            &store,
            "Yuewen",
            &ProfileUpdate {
                legal_name: Some("阅文集团".into()),
                email: Some(" Legal@Yuewen.example ".into()),
                ..ProfileUpdate::default()
            },
            at,
        )
        .await
        .unwrap();
        assert_eq!(first.language, DEFAULT_PROFILE_LANGUAGE);
        assert_eq!(first.email.as_deref(), Some("Legal@Yuewen.example"));

        // One field changes, the others stay; an empty text clears a field.
        let second = set_profile(
            &store,
            "Yuewen",
            &ProfileUpdate {
                address: Some("上海市浦东新区\n碧波路690号".into()),
                email: Some(String::new()),
                language: Some("EN".into()),
                ..ProfileUpdate::default()
            },
            at,
        )
        .await
        .unwrap();
        assert_eq!(second.legal_name.as_deref(), Some("阅文集团"));
        assert_eq!(
            second.address.as_deref(),
            Some("上海市浦东新区\n碧波路690号")
        );
        assert_eq!(second.email, None);
        assert_eq!(second.language, "en");

        for (update, named) in [
            (
                ProfileUpdate {
                    email: Some("legal at yuewen".into()),
                    ..ProfileUpdate::default()
                },
                "email \"legal at yuewen\"",
            ),
            (
                ProfileUpdate {
                    language: Some("fr".into()),
                    ..ProfileUpdate::default()
                },
                "language \"fr\"",
            ),
            (
                ProfileUpdate {
                    phone: Some("call me".into()),
                    ..ProfileUpdate::default()
                },
                "phone \"call me\"",
            ),
            (
                ProfileUpdate {
                    signature: Some("/s/ A\nB".into()),
                    ..ProfileUpdate::default()
                },
                "signature contains control characters",
            ),
        ] {
            let error = set_profile(&store, "Yuewen", &update, at)
                .await
                .unwrap_err();
            assert_eq!(error.kind(), ErrorKind::Invalid, "{error}");
            assert!(error.to_string().contains(named), "{error}");
        }
        // Nothing of a refused update was written.
        assert_eq!(
            profile(&store, "Yuewen").await.unwrap().profile,
            Some(second)
        );
        let missing = set_profile(&store, "Nobody", &ProfileUpdate::default(), at)
            .await
            .unwrap_err();
        assert_eq!(missing.kind(), ErrorKind::NotFound);
    }

    #[test]
    fn emails_and_phones_are_checked_for_their_form() {
        for good in [
            "a@b.example",
            "legal+dmca@pub.example.com",
            "张三@出版.中国",
        ] {
            assert_eq!(parse_email(good).unwrap(), good, "{good}");
        }
        for bad in [
            "",
            "a",
            "a@b",
            "@b.example",
            "a@.example",
            "a b@c.example",
            "a@@b.example",
        ] {
            assert!(parse_email(bad).is_err(), "{bad:?}");
        }
        for good in ["+86 21 1234 5678", "(555) 123-4567 ext. 9", "010-12345678"] {
            assert_eq!(parse_phone(good).unwrap(), good, "{good}");
        }
        for bad in ["", "1234", "call 12345678", "+86 21 <b>"] {
            assert!(parse_phone(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn licensed_hosts_are_read_as_the_host_they_name() {
        for (input, host) in [
            ("partner.example", "partner.example"),
            (" Partner.Example ", "partner.example"),
            ("https://partner.example/books/1", "partner.example"),
            ("*.partner.example", "partner.example"),
            ("partner.example:8080", "partner.example"),
            ("partner.example.", "partner.example"),
            ("正版.example", "xn--2lw00m.example"),
            ("127.0.0.1", "127.0.0.1"),
        ] {
            assert_eq!(licensed_host(input).unwrap(), host, "{input}");
        }
        for bad in ["", "http://", "[::1]", "a b.example"] {
            assert!(licensed_host(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn a_licensed_host_reads_back_as_itself() {
        // Found by the `catalog` fuzz target: `a://8` gave the host `8`, which reads as
        // `0.0.0.8`, and `2024-03-.0..` gave `2024-03-.0`, which is no host at all, so the
        // stored licence named no host a crawled page has.
        for bad in [
            "a://8",
            "2024-03-.0..",
            "ftp://partner.example/books",
            "*.*.x",
        ] {
            assert!(licensed_host(bad).is_err(), "{bad:?}");
        }
        assert_eq!(licensed_host("1..").unwrap(), "0.0.0.1");
        for input in [
            "https://8/books",
            "http://Partner.Example:8080/",
            "*.partner.example",
        ] {
            let host = licensed_host(input).unwrap();
            assert_eq!(licensed_host(&host).unwrap(), host, "{input}");
        }
    }

    #[test]
    fn a_signature_image_is_a_png_or_jpeg_by_its_magic_bytes_and_small() {
        let png = b"\x89PNG\r\n\x1a\n rest of the file".to_vec();
        assert_eq!(
            parse_signature_image(png).unwrap().content_type,
            "image/png"
        );
        let jpeg = vec![0xff, 0xd8, 0xff, 0xe0, 0, 16];
        assert_eq!(
            parse_signature_image(jpeg).unwrap().content_type,
            "image/jpeg"
        );
        for (bytes, why) in [
            (b"GIF89a".to_vec(), "neither a PNG nor a JPEG"),
            (
                b"<svg xmlns='http://www.w3.org/2000/svg'/>".to_vec(),
                "neither",
            ),
            // A PNG's name, not its bytes.
            (b"PNG\r\n".to_vec(), "neither"),
            (Vec::new(), "empty"),
        ] {
            let error = parse_signature_image(bytes).unwrap_err();
            assert_eq!(error.kind(), ErrorKind::Invalid);
            assert!(error.to_string().contains(why), "{error}");
        }
        let mut big = b"\x89PNG\r\n\x1a\n".to_vec();
        big.resize(MAX_SIGNATURE_IMAGE_BYTES, 0);
        assert!(
            parse_signature_image(big.clone()).is_ok(),
            "exactly the cap"
        );
        big.push(0);
        assert!(
            parse_signature_image(big)
                .unwrap_err()
                .to_string()
                .contains("200 KB")
        );
    }
}
