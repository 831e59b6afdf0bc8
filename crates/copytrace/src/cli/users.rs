//! `copytrace user`: accounts of the admin web and API, bootstrapped from the command line.

use std::io::{BufRead, IsTerminal};
use std::process::ExitCode;

use anyhow::{Context, Result, bail};
use clap::{Subcommand, ValueEnum};
use copytrace_service::accounts;
use copytrace_store::Role;

use super::Globals;

/// `copytrace user …`
#[derive(Debug, Subcommand)]
pub enum UserCommand {
    /// Create an account (see --password for where the password comes from).
    Add {
        /// Login e-mail (case does not matter).
        #[arg(long)]
        email: String,
        /// What the account may do.
        #[arg(long, value_enum)]
        role: RoleArg,
        /// The rights holder a `rights-holder` account belongs to (it sees only its works).
        #[arg(long, value_name = "NAME")]
        rights_holder: Option<String>,
        /// The password. Prefer the variable: a flag is visible to other users of the machine
        /// in the process list. Without either, it is asked for twice on a terminal, else read
        /// from the first line of standard input.
        #[arg(long, env = "COPYTRACE_PASSWORD", hide_env_values = true)]
        password: Option<String>,
    },
    /// List accounts (never their password hashes).
    List {
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// Give an account a new password (read as for `add`).
    Passwd {
        /// Login e-mail.
        email: String,
        /// The password. Prefer the variable: a flag is visible to other users of the machine
        /// in the process list. Without either, it is asked for twice on a terminal, else read
        /// from the first line of standard input.
        #[arg(long, env = "COPYTRACE_PASSWORD", hide_env_values = true)]
        password: Option<String>,
    },
    /// Remove an account.
    Rm {
        /// Login e-mail.
        email: String,
    },
    /// API tokens of an account, for scripts calling the JSON API (`Authorization: Bearer`).
    #[command(subcommand)]
    Token(TokenCommand),
}

/// `copytrace user token …`
#[derive(Debug, Subcommand)]
pub enum TokenCommand {
    /// Make a token acting as the account (its role, its rights holder); printed this once.
    Add {
        /// Login e-mail of the account.
        email: String,
        /// What the token is for ("nightly export"), shown by `list`.
        #[arg(long)]
        name: String,
    },
    /// List an account's tokens (never the tokens themselves).
    List {
        /// Login e-mail of the account.
        email: String,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// Revoke one of an account's tokens: requests with it are refused from now on.
    Rm {
        /// Login e-mail of the account.
        email: String,
        /// The token's id, as `list` shows it.
        id: i64,
    },
}

/// A role on the command line.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum RoleArg {
    /// Everything, users included.
    Admin,
    /// Schedules and watches crawls.
    Operator,
    /// Statistics and exports.
    Analyst,
    /// One rights holder's works, matches, notices and exports only.
    RightsHolder,
}

impl From<RoleArg> for Role {
    fn from(role: RoleArg) -> Self {
        match role {
            RoleArg::Admin => Role::Admin,
            RoleArg::Operator => Role::Operator,
            RoleArg::Analyst => Role::Analyst,
            RoleArg::RightsHolder => Role::RightsHolder,
        }
    }
}

/// Runs `copytrace user …`.
pub async fn run(globals: &Globals, command: UserCommand) -> Result<ExitCode> {
    let store = globals.store().await?;
    let store = store.as_ref();
    match command {
        UserCommand::Add {
            email,
            role,
            rights_holder,
            password,
        } => {
            let password = read_password(password)?;
            let id = accounts::add_user(
                store,
                &email,
                role.into(),
                rights_holder.as_deref(),
                &password,
            )
            .await?;
            println!(
                "user {id}: {} ({})",
                email.trim().to_lowercase(),
                Role::from(role).as_str()
            );
        }
        UserCommand::List { json } => {
            let accounts = accounts::list(store).await?;
            if json {
                println!("{}", serde_json::to_string_pretty(&accounts)?);
            } else {
                for account in &accounts {
                    let user = &account.user;
                    println!(
                        "{:>4}  {:<32} {:<13} {}",
                        user.id,
                        user.email,
                        user.role.as_str(),
                        account.rights_holder.as_deref().unwrap_or("")
                    );
                }
                println!("{} user(s)", accounts.len());
            }
        }
        UserCommand::Passwd { email, password } => {
            let password = read_password(password)?;
            accounts::set_password(store, &email, &password).await?;
            println!("new password set for {}", email.trim().to_lowercase());
        }
        UserCommand::Rm { email } => {
            accounts::remove_user(store, &email).await?;
            println!("removed user {}", email.trim().to_lowercase());
        }
        UserCommand::Token(command) => token(store, command).await?,
    }
    Ok(ExitCode::SUCCESS)
}

/// Runs `copytrace user token …`.
async fn token(store: &dyn copytrace_store::Store, command: TokenCommand) -> Result<()> {
    match command {
        TokenCommand::Add { email, name } => {
            let (token, id) = accounts::create_api_token(store, &email, &name).await?;
            // The token alone on standard output, so `TOKEN=$(copytrace user token add …)`
            // works; what it is goes to standard error.
            eprintln!(
                "API token {id} of {}: shown this once, keep it secret",
                email.trim().to_lowercase()
            );
            println!("{token}");
        }
        TokenCommand::List { email, json } => {
            let tokens = accounts::list_api_tokens(store, &email).await?;
            if json {
                println!("{}", serde_json::to_string_pretty(&tokens)?);
            } else {
                for token in &tokens {
                    println!(
                        "{:>4}  {:<32} created {}  last used {}",
                        token.id,
                        token.name,
                        token.created_at.format("%Y-%m-%d %H:%M"),
                        token.last_used_at.map_or_else(
                            || "never".to_owned(),
                            |at| at.format("%Y-%m-%d %H:%M").to_string()
                        )
                    );
                }
                println!("{} token(s)", tokens.len());
            }
        }
        TokenCommand::Rm { email, id } => {
            accounts::revoke_api_token(store, &email, id).await?;
            println!("revoked API token {id} of {}", email.trim().to_lowercase());
        }
    }
    Ok(())
}

/// The new password: `--password` or `COPYTRACE_PASSWORD`, else asked twice on the terminal,
/// else the first line of standard input.
fn read_password(given: Option<String>) -> Result<String> {
    if let Some(password) = given {
        return Ok(password);
    }
    if std::io::stdin().is_terminal() {
        let first = rpassword::prompt_password("Password: ").context("cannot read the password")?;
        let again = rpassword::prompt_password("Again: ").context("cannot read the password")?;
        if first != again {
            bail!("the two passwords differ");
        }
        return Ok(first);
    }
    let mut line = String::new();
    std::io::stdin()
        .lock()
        .read_line(&mut line)
        .context("cannot read the password from standard input")?;
    let password = line.trim_end_matches(['\r', '\n']);
    if password.is_empty() {
        bail!("no password: set COPYTRACE_PASSWORD or give it on standard input");
    }
    Ok(password.to_owned())
}
