//! Multi-core boards (feature `cores`): the team of cores every device of the firmware
//! shares. The board starts its second core in [`serve`]; from then on each device made
//! through [`with_team`] runs a dispatch's workgroups and output tiles on both cores.

use hal_local::team::Team;
use hal_local::workers::Workers;
use hal_local::LocalConfig;

/// This core and one more.
pub static TEAM: Team = Team::new(1);

/// The second core's main loop: serves the team's forks for ever.
pub fn serve() -> ! {
    TEAM.serve()
}

/// Whether the second core serves (a board waits for it after starting it).
pub fn serving() -> bool {
    TEAM.serving() == 1
}

/// Logs how many forks (a dispatch's workgroups, or an output's tiles) ran on both cores.
pub fn report() {
    say!("cores: {} forks ran on both cores", TEAM.shared_forks());
}

/// `config` with the team once the second core serves; unchanged before.
pub fn with_team(config: LocalConfig) -> LocalConfig {
    LocalConfig {
        team: serving().then_some(&TEAM as &'static dyn Workers),
        ..config
    }
}

/// Starts the second core with the board's `start_second_core` and waits (a bounded spin)
/// until it serves; logs and returns `false` where it cannot.
pub fn start(start_second_core: fn() -> Result<(), i64>) -> bool {
    if let Err(status) = start_second_core() {
        say!("cores: the second core did not start (status {})", status);
        return false;
    }
    for _ in 0..100_000_000u32 {
        if serving() {
            say!("cores: the second core serves the team");
            return true;
        }
        core::hint::spin_loop();
    }
    say!("cores: the second core started but never served the team");
    false
}
