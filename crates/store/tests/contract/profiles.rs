//! Rights-holder profiles (issue 40): set whole, read back as stored, one per holder, gone
//! with their holder.

use std::sync::Arc;

use copytrace_store::{RightsHolderProfile, SignatureImage, Store};

use crate::helpers::{at, contract_tests, invalid, not_found};

contract_tests!(
    a_profile_reads_back_as_set_and_is_replaced_whole,
    a_profile_is_refused_for_an_unknown_holder_or_language,
    a_holders_profile_goes_with_the_holder,
    a_signature_image_is_kept_apart_from_the_profiles_texts,
);

fn profile(holder: i64) -> RightsHolderProfile {
    RightsHolderProfile {
        rights_holder_id: holder,
        legal_name: Some("上海阅文信息技术有限公司".to_owned()),
        address: Some("上海市浦东新区碧波路690号".to_owned()),
        email: Some("legal@yuewen.example".to_owned()),
        phone: Some("+86 21 0000 0000".to_owned()),
        agent_name: Some("张三".to_owned()),
        agent_role: Some("法务经理".to_owned()),
        agent_contact: Some("zhangsan@yuewen.example".to_owned()),
        signature: Some("/s/ 张三".to_owned()),
        language: "zh".to_owned(),
        updated_at: at(5),
    }
}

async fn a_profile_reads_back_as_set_and_is_replaced_whole(store: Arc<dyn Store>) {
    let holder = store.ensure_rights_holder("Yuewen").await.unwrap();
    let other = store.ensure_rights_holder("Zongheng").await.unwrap();
    assert_eq!(store.rights_holder_profile(holder).await.unwrap(), None);

    let full = profile(holder);
    store.set_rights_holder_profile(&full).await.unwrap();
    assert_eq!(
        store.rights_holder_profile(holder).await.unwrap(),
        Some(full.clone())
    );
    // Another holder's profile is its own.
    assert_eq!(store.rights_holder_profile(other).await.unwrap(), None);

    // Replaced whole: a field left out is cleared; texts are trimmed and blank ones are `None`.
    let replaced = RightsHolderProfile {
        legal_name: Some("  Yuewen Group  ".to_owned()),
        address: None,
        phone: Some("   ".to_owned()),
        language: "en".to_owned(),
        updated_at: at(9),
        ..full
    };
    store.set_rights_holder_profile(&replaced).await.unwrap();
    let stored = store.rights_holder_profile(holder).await.unwrap().unwrap();
    assert_eq!(stored.legal_name.as_deref(), Some("Yuewen Group"));
    assert_eq!(stored.address, None);
    assert_eq!(stored.phone, None);
    assert_eq!(stored.email.as_deref(), Some("legal@yuewen.example"));
    assert_eq!(stored.language, "en");
    assert_eq!(stored.updated_at, at(9));
}

async fn a_profile_is_refused_for_an_unknown_holder_or_language(store: Arc<dyn Store>) {
    let missing = not_found(store.set_rights_holder_profile(&profile(404)).await);
    assert!(missing.contains("rights holder 404"), "{missing}");
    let missing = not_found(store.rights_holder_profile(404).await);
    assert!(missing.contains("rights holder 404"), "{missing}");

    let holder = store.ensure_rights_holder("Yuewen").await.unwrap();
    let french = RightsHolderProfile {
        language: "fr".to_owned(),
        ..profile(holder)
    };
    let why = invalid(store.set_rights_holder_profile(&french).await);
    assert!(why.contains("\"fr\""), "{why}");
    assert_eq!(store.rights_holder_profile(holder).await.unwrap(), None);
}

async fn a_holders_profile_goes_with_the_holder(store: Arc<dyn Store>) {
    let holder = store.ensure_rights_holder("Yuewen").await.unwrap();
    store
        .set_rights_holder_profile(&profile(holder))
        .await
        .unwrap();
    store.delete_rights_holder(holder).await.unwrap();
    // A holder registered again under the same name (on SQLite, even under the same id)
    // starts without the old profile.
    let again = store.ensure_rights_holder("Yuewen").await.unwrap();
    assert_eq!(store.rights_holder_profile(again).await.unwrap(), None);
}

async fn a_signature_image_is_kept_apart_from_the_profiles_texts(store: Arc<dyn Store>) {
    let holder = store.ensure_rights_holder("Yuewen").await.unwrap();
    let other = store.ensure_rights_holder("Zongheng").await.unwrap();
    let png = SignatureImage {
        content_type: "image/png".to_owned(),
        bytes: b"\x89PNG\r\n\x1a\nsignature".to_vec(),
    };
    // No profile yet: refused, saying so.
    invalid(store.set_signature_image(holder, Some(&png)).await);
    store
        .set_rights_holder_profile(&profile(holder))
        .await
        .unwrap();
    assert_eq!(store.signature_image(holder).await.unwrap(), None);
    store.set_signature_image(holder, Some(&png)).await.unwrap();
    assert_eq!(
        store.signature_image(holder).await.unwrap(),
        Some(png.clone())
    );
    // Saving the texts keeps it; another holder has none.
    store
        .set_rights_holder_profile(&RightsHolderProfile {
            signature: Some("/s/ 李四".to_owned()),
            ..profile(holder)
        })
        .await
        .unwrap();
    assert_eq!(store.signature_image(holder).await.unwrap(), Some(png));
    store
        .set_rights_holder_profile(&profile(other))
        .await
        .unwrap();
    assert_eq!(store.signature_image(other).await.unwrap(), None);
    // Replaced, then cleared.
    let jpeg = SignatureImage {
        content_type: "image/jpeg".to_owned(),
        bytes: vec![0xff, 0xd8, 0xff, 0xe0, 1, 2, 3],
    };
    store
        .set_signature_image(holder, Some(&jpeg))
        .await
        .unwrap();
    assert_eq!(store.signature_image(holder).await.unwrap(), Some(jpeg));
    store.set_signature_image(holder, None).await.unwrap();
    assert_eq!(store.signature_image(holder).await.unwrap(), None);
    // Another type, and an unknown holder, are refused.
    invalid(
        store
            .set_signature_image(
                holder,
                Some(&SignatureImage {
                    content_type: "image/gif".to_owned(),
                    bytes: b"GIF89a".to_vec(),
                }),
            )
            .await,
    );
    not_found(store.signature_image(9999).await);
}
