//! The interface's two languages: Chinese and English, chosen by the `copytrace_lang` cookie,
//! else by the browser's `Accept-Language` (Chinese when it prefers Chinese to English).

use axum::http::HeaderMap;
use axum_extra::extract::CookieJar;

/// Cookie remembering the chosen language.
pub const LANG_COOKIE: &str = "copytrace_lang";

/// A language of the interface.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Lang {
    /// 中文.
    Zh,
    /// English.
    En,
}

impl Lang {
    /// The language named in a URL or cookie (`zh`, `en`).
    pub fn parse(code: &str) -> Option<Lang> {
        match code {
            "zh" => Some(Lang::Zh),
            "en" => Some(Lang::En),
            _ => None,
        }
    }

    /// The language of a request: the cookie, else the first of Chinese or English that
    /// `Accept-Language` lists (its order is the browser's preference), else English.
    pub fn of_request(jar: &CookieJar, headers: &HeaderMap) -> Lang {
        if let Some(lang) = jar.get(LANG_COOKIE).and_then(|c| Lang::parse(c.value())) {
            return lang;
        }
        let accepted = headers
            .get(axum::http::header::ACCEPT_LANGUAGE)
            .and_then(|v| v.to_str().ok())
            .unwrap_or("");
        let mut tags: Vec<(f32, usize, &str)> = accepted
            .split(',')
            .enumerate()
            .filter_map(|(position, part)| {
                let mut pieces = part.split(';');
                let tag = pieces.next()?.trim();
                let quality = pieces
                    .find_map(|p| p.trim().strip_prefix("q="))
                    .and_then(|q| q.parse::<f32>().ok())
                    .unwrap_or(1.0);
                Some((quality, position, tag))
            })
            .collect();
        tags.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
        tags.iter()
            .filter(|(quality, ..)| *quality > 0.0)
            .find_map(|(_, _, tag)| {
                let tag = tag.to_ascii_lowercase();
                if tag.starts_with("zh") {
                    Some(Lang::Zh)
                } else if tag.starts_with("en") {
                    Some(Lang::En)
                } else {
                    None
                }
            })
            .unwrap_or(Lang::En)
    }

    /// The interface's texts in this language.
    pub fn texts(self) -> &'static Texts {
        match self {
            Lang::Zh => &ZH,
            Lang::En => &EN,
        }
    }
}

/// Every text of the interface, once per language. Each field is the text its name says.
#[derive(Debug)]
#[allow(missing_docs)]
pub struct Texts {
    pub html_lang: &'static str,
    pub other_lang: &'static str,
    pub other_lang_name: &'static str,
    pub login: &'static str,
    pub logout: &'static str,
    pub email: &'static str,
    pub password: &'static str,
    pub wrong_login: &'static str,
    pub too_many_attempts: &'static str,
    pub expired_form: &'static str,
    pub dashboard: &'static str,
    pub works_copied: &'static str,
    pub infringing_pages: &'static str,
    pub sites: &'static str,
    pub removed: &'static str,
    pub new_matches_per_day: &'static str,
    pub nothing_yet: &'static str,
    pub most_pirated_works: &'static str,
    pub top_sites: &'static str,
    pub work: &'static str,
    pub pages: &'static str,
    pub site: &'static str,
    pub copies: &'static str,
    pub removal_rate: &'static str,
    pub roles: [&'static str; 4],
    pub works: &'static str,
    pub search: &'static str,
    pub chapters: &'static str,
    pub page: &'static str,
    pub page_url: &'static str,
    pub score: &'static str,
    pub coverage: &'static str,
    pub first_seen: &'static str,
    pub status: &'static str,
    pub review: &'static str,
    pub evidence: &'static str,
    pub original: &'static str,
    pub pirated: &'static str,
    pub diff_legend: &'static str,
}

static ZH: Texts = Texts {
    html_lang: "zh-CN",
    other_lang: "en",
    other_lang_name: "English",
    login: "登录",
    logout: "退出",
    email: "邮箱",
    password: "密码",
    wrong_login: "邮箱或密码不正确。",
    too_many_attempts: "登录失败次数过多，请稍后再试。",
    expired_form: "表单已过期，请重新提交。",
    dashboard: "概览",
    works_copied: "被盗版作品",
    infringing_pages: "侵权页面",
    sites: "站点",
    removed: "已删除",
    new_matches_per_day: "每日新发现的侵权",
    nothing_yet: "暂无数据。",
    most_pirated_works: "盗版最多的作品",
    top_sites: "侵权最多的站点",
    work: "作品",
    pages: "页面",
    site: "站点",
    copies: "侵权数",
    removal_rate: "删除率",
    roles: ["管理员", "运维", "分析师", "权利人"],
    works: "作品",
    search: "搜索",
    chapters: "章",
    page: "页",
    page_url: "侵权页面",
    score: "相似度",
    coverage: "覆盖率",
    first_seen: "首次发现",
    status: "状态",
    review: "审核",
    evidence: "侵权证据",
    original: "原作",
    pirated: "盗版页面",
    diff_legend: "黄色：盗版页面中与原作不同的文字（替换、插入的字符）；红色删除线：原作中未出现在盗版页面的文字。",
};

static EN: Texts = Texts {
    html_lang: "en",
    other_lang: "zh",
    other_lang_name: "中文",
    login: "Log in",
    logout: "Log out",
    email: "E-mail",
    password: "Password",
    wrong_login: "Wrong e-mail or password.",
    too_many_attempts: "Too many failed logins. Try again later.",
    expired_form: "This form has expired. Please submit it again.",
    dashboard: "Dashboard",
    works_copied: "works copied",
    infringing_pages: "infringing pages",
    sites: "sites",
    removed: "removed",
    new_matches_per_day: "New matches per day",
    nothing_yet: "Nothing yet.",
    most_pirated_works: "Most pirated works",
    top_sites: "Top sites",
    work: "Work",
    pages: "Pages",
    site: "Site",
    copies: "Copies",
    removal_rate: "Removed",
    roles: ["admin", "operator", "analyst", "rights holder"],
    works: "Works",
    search: "Search",
    chapters: "chapters",
    page: "page",
    page_url: "Infringing page",
    score: "Score",
    coverage: "Coverage",
    first_seen: "First seen",
    status: "Status",
    review: "Review",
    evidence: "Evidence",
    original: "Original",
    pirated: "Pirated page",
    diff_legend: "Yellow: text of the pirated page that differs from the original (substituted or inserted characters). Struck out in red: text of the original missing from the page.",
};

#[cfg(test)]
mod tests {
    use axum::http::HeaderValue;

    use super::*;

    fn lang(accept: &str) -> Lang {
        let mut headers = HeaderMap::new();
        headers.insert(
            axum::http::header::ACCEPT_LANGUAGE,
            HeaderValue::from_str(accept).unwrap(),
        );
        Lang::of_request(&CookieJar::new(), &headers)
    }

    #[test]
    fn the_browsers_preferred_language_of_the_two_wins() {
        assert_eq!(lang("zh-CN,zh;q=0.9,en;q=0.8"), Lang::Zh);
        assert_eq!(lang("en-US,en;q=0.9,zh;q=0.8"), Lang::En);
        assert_eq!(lang("fr-FR,zh-TW;q=0.5"), Lang::Zh);
        assert_eq!(lang("en;q=0.5,zh-Hant;q=0.9"), Lang::Zh);
        assert_eq!(lang("de,fr"), Lang::En);
        assert_eq!(lang(""), Lang::En);
        assert_eq!(lang("zh;q=0"), Lang::En);
    }
}
