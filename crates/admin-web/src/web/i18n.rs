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
    pub matches: &'static str,
    pub review_queue: &'static str,
    pub notices: &'static str,
    pub statistics: &'static str,
    pub schedules: &'static str,
    pub runs: &'static str,
    pub library: &'static str,
    pub users: &'static str,
    pub forbidden: &'static str,
    pub invalid_filter: &'static str,
    pub since: &'static str,
    pub until: &'static str,
    pub min_score: &'static str,
    pub nothing_found: &'static str,
    pub decision: &'static str,
    pub confirm: &'static str,
    pub reject: &'static str,
    pub license: &'static str,
    pub reopen: &'static str,
    pub note: &'static str,
    pub apply_to_ticked: &'static str,
    pub any: &'static str,
    pub reported: &'static str,
    pub filter: &'static str,
    pub choose_decision: &'static str,
    pub choose_matches: &'static str,
    pub export: &'static str,
    pub stats_works: &'static str,
    pub stats_sites: &'static str,
    pub stats_daily: &'static str,
    pub online: &'static str,
    pub day: &'static str,
    pub new_matches: &'static str,
    pub removals: &'static str,
    pub best_score: &'static str,
    pub live_page: &'static str,
    pub created: &'static str,
    pub sent_at: &'static str,
    pub create_notice: &'static str,
    pub language: &'static str,
    pub mark_sent: &'static str,
    pub mark_ignored: &'static str,
    pub back_to_draft: &'static str,
    pub removal_progress: &'static str,
    pub notice_text: &'static str,
    pub name: &'static str,
    pub cron: &'static str,
    pub timezone: &'static str,
    pub seeds: &'static str,
    pub next_runs: &'static str,
    pub preview: &'static str,
    pub create: &'static str,
    pub enabled: &'static str,
    pub paused: &'static str,
    pub pause: &'static str,
    pub resume: &'static str,
    pub run_now: &'static str,
    pub delete: &'static str,
    pub kind: &'static str,
    pub trigger: &'static str,
    pub progress: &'static str,
    pub started: &'static str,
    pub finished: &'static str,
    pub error: &'static str,
    pub jobs: &'static str,
    pub role: &'static str,
    pub rights_holder: &'static str,
    pub add_user: &'static str,
    pub upload: &'static str,
    pub files: &'static str,
    pub saved: &'static str,
    pub cancel: &'static str,
    pub schedule_created: &'static str,
    pub cron_help: &'static str,
    pub max_pages: &'static str,
    pub owner: &'static str,
    pub state: &'static str,
    pub pages_done: &'static str,
    /// Stored codes (states, kinds) and how they read: see [`Texts::code`].
    pub not_found: &'static str,
    pub all_matches_of_work: &'static str,
    pub passage: &'static str,
    pub decide_on_match: &'static str,
    pub seeds_count: &'static str,
    pub new_schedule: &'static str,
    pub times_utc: &'static str,
    pub cannot_remove_self: &'static str,
    pub add: &'static str,
    pub copies_removed: &'static str,
    pub new_notice: &'static str,
    pub codes: &'static [(&'static str, &'static str)],
}

impl Texts {
    /// How a stored code (`pending`, `notice_sent`, `running`, …) reads in this language; the
    /// code itself when it has no translation.
    pub fn code<'a>(&self, code: &'a str) -> &'a str
    where
        'static: 'a,
    {
        self.codes
            .iter()
            .find(|(stored, _)| *stored == code)
            .map_or(code, |(_, text)| text)
    }
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
    matches: "侵权记录",
    review_queue: "待审核",
    notices: "下架通知",
    statistics: "统计",
    schedules: "抓取计划",
    runs: "运行记录",
    library: "作品库",
    users: "用户",
    forbidden: "您的角色无权访问此页面。",
    invalid_filter: "筛选条件无效：",
    since: "起始日期",
    until: "截止日期",
    min_score: "最低相似度",
    nothing_found: "没有符合条件的记录。",
    decision: "处理",
    confirm: "确认侵权",
    reject: "误报",
    license: "已授权",
    reopen: "重新审核",
    note: "备注",
    apply_to_ticked: "应用于勾选项",
    any: "全部",
    reported: "已报告（待审核与已确认）",
    filter: "筛选",
    choose_decision: "请选择一种处理方式。",
    choose_matches: "请至少勾选一条记录。",
    export: "导出",
    stats_works: "按作品",
    stats_sites: "按站点",
    stats_daily: "按日",
    online: "在线",
    day: "日期",
    new_matches: "新发现",
    removals: "删除",
    best_score: "最高相似度",
    live_page: "打开侵权页面",
    created: "创建时间",
    sent_at: "发送时间",
    create_notice: "生成下架通知",
    language: "语言",
    mark_sent: "标记为已发送",
    mark_ignored: "标记为已忽略",
    back_to_draft: "退回草稿",
    removal_progress: "删除进度",
    notice_text: "通知正文",
    name: "名称",
    cron: "Cron 表达式",
    timezone: "时区",
    seeds: "起始网址（每行一个）",
    next_runs: "接下来的运行时间",
    preview: "预览",
    create: "创建",
    enabled: "启用",
    paused: "已暂停",
    pause: "暂停",
    resume: "恢复",
    run_now: "立即运行",
    delete: "删除",
    kind: "类型",
    trigger: "触发方式",
    progress: "进度",
    started: "开始",
    finished: "结束",
    error: "错误",
    jobs: "任务队列",
    role: "角色",
    rights_holder: "权利人",
    add_user: "添加用户",
    upload: "上传",
    files: "文件",
    saved: "已保存。",
    cancel: "取消",
    schedule_created: "计划已创建。",
    cron_help: "五个字段：分 时 日 月 周，例如 0 3 * * * 表示每天 3:00。",
    max_pages: "每次最多页面数",
    owner: "负责人",
    state: "状态",
    pages_done: "页面",
    not_found: "找不到此页面，或它不属于您的账户。",
    all_matches_of_work: "查看此作品的全部侵权记录",
    passage: "段落",
    decide_on_match: "审核此记录",
    seeds_count: "起始网址",
    new_schedule: "新建抓取计划",
    times_utc: "时间为 UTC。",
    cannot_remove_self: "不能删除自己的账户。",
    add: "添加",
    copies_removed: "已删除 / 总数",
    new_notice: "生成新的下架通知（列出该站点上已确认且仍在线的侵权）",
    codes: &[
        ("open", "在线"),
        ("notice_sent", "已发通知"),
        ("removed", "已删除"),
        ("withdrawn", "已撤回"),
        ("licensed", "已授权"),
        ("pending", "待审核"),
        ("confirmed", "已确认"),
        ("rejected", "误报"),
        ("queued", "排队中"),
        ("running", "运行中"),
        ("succeeded", "成功"),
        ("failed", "失败"),
        ("cancelled", "已取消"),
        ("done", "完成"),
        ("dead", "已放弃"),
        ("crawl", "抓取"),
        ("dedup", "去重比对"),
        ("schedule", "定时"),
        ("catch_up", "补跑"),
        ("manual", "手动"),
        ("draft", "草稿"),
        ("sent", "已发送"),
        ("removal_verified", "已确认删除"),
        ("partially_removed", "部分删除"),
        ("ignored", "已忽略"),
        ("admin", "管理员"),
        ("operator", "运维"),
        ("analyst", "分析师"),
        ("rights_holder", "权利人"),
    ],
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
    matches: "Matches",
    review_queue: "Review queue",
    notices: "Notices",
    statistics: "Statistics",
    schedules: "Schedules",
    runs: "Runs",
    library: "Library",
    users: "Users",
    forbidden: "Your role may not open this page.",
    invalid_filter: "Invalid filter:",
    since: "From",
    until: "To",
    min_score: "Min. score",
    nothing_found: "Nothing matches this filter.",
    decision: "Decision",
    confirm: "Confirm",
    reject: "False positive",
    license: "Licensed",
    reopen: "Back to review",
    note: "Note",
    apply_to_ticked: "Apply to ticked",
    any: "Any",
    reported: "Reported (pending and confirmed)",
    filter: "Filter",
    choose_decision: "Choose a decision.",
    choose_matches: "Tick at least one match.",
    export: "Export",
    stats_works: "By work",
    stats_sites: "By site",
    stats_daily: "By day",
    online: "Online",
    day: "Day",
    new_matches: "New matches",
    removals: "Removals",
    best_score: "Best score",
    live_page: "Open the live page",
    created: "Created",
    sent_at: "Sent",
    create_notice: "Create a notice",
    language: "Language",
    mark_sent: "Mark sent",
    mark_ignored: "Mark ignored",
    back_to_draft: "Back to draft",
    removal_progress: "Removal progress",
    notice_text: "Notice text",
    name: "Name",
    cron: "Cron expression",
    timezone: "Time zone",
    seeds: "Seed URLs (one per line)",
    next_runs: "Next runs",
    preview: "Preview",
    create: "Create",
    enabled: "Enabled",
    paused: "Paused",
    pause: "Pause",
    resume: "Resume",
    run_now: "Run now",
    delete: "Delete",
    kind: "Kind",
    trigger: "Trigger",
    progress: "Progress",
    started: "Started",
    finished: "Finished",
    error: "Error",
    jobs: "Jobs",
    role: "Role",
    rights_holder: "Rights holder",
    add_user: "Add user",
    upload: "Upload",
    files: "Files",
    saved: "Saved.",
    cancel: "Cancel",
    schedule_created: "Schedule created.",
    cron_help: "Five fields: minute hour day month weekday, e.g. 0 3 * * * for 03:00 every day.",
    max_pages: "Most pages per crawl",
    owner: "Owner",
    state: "State",
    pages_done: "pages",
    not_found: "This page does not exist, or it is not your account's.",
    all_matches_of_work: "All matches of this work",
    passage: "Passage",
    decide_on_match: "Decide on this match",
    seeds_count: "Seeds",
    new_schedule: "New crawl schedule",
    times_utc: "Times are UTC.",
    cannot_remove_self: "You cannot remove your own account.",
    add: "Add",
    copies_removed: "removed / listed",
    new_notice: "New notice (lists the confirmed copies still online on the site)",
    codes: &[
        ("open", "online"),
        ("notice_sent", "notice sent"),
        ("removed", "removed"),
        ("withdrawn", "withdrawn"),
        ("licensed", "licensed"),
        ("pending", "pending"),
        ("confirmed", "confirmed"),
        ("rejected", "false positive"),
        ("queued", "queued"),
        ("running", "running"),
        ("succeeded", "succeeded"),
        ("failed", "failed"),
        ("cancelled", "cancelled"),
        ("done", "done"),
        ("dead", "dead"),
        ("crawl", "crawl"),
        ("dedup", "dedup"),
        ("schedule", "schedule"),
        ("catch_up", "catch-up"),
        ("manual", "manual"),
        ("draft", "draft"),
        ("sent", "sent"),
        ("removal_verified", "removal verified"),
        ("partially_removed", "partially removed"),
        ("ignored", "ignored"),
        ("admin", "admin"),
        ("operator", "operator"),
        ("analyst", "analyst"),
        ("rights_holder", "rights holder"),
    ],
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
