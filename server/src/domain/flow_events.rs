//! What happens in a flow: the events a flow records (`service-flow-event`, told to its host
//! and to the server alike), how a session ends (`flow.session_ended`: completed, exited,
//! handed off, or abandoned after `IDLE` without an event), and the funnel of an app's
//! sessions of one scope over a period.

use chrono::{DateTime, Duration, Utc};

use super::FieldError;

super::text_enum! {
    /// An event of a flow session.
    pub enum FlowEventName {
        Opened = "opened",
        StepViewed = "step_viewed",
        ErrorShown = "error_shown",
        Exited = "exited",
        Completed = "completed",
        HandedOff = "handed_off",
    }
}

impl FlowEventName {
    /// The customer left the flow: the session's summary is due.
    pub fn ends_session(self) -> bool {
        matches!(
            self,
            FlowEventName::Exited | FlowEventName::Completed | FlowEventName::HandedOff
        )
    }
}

/// A session without an event for this long is abandoned (its summary then goes out within
/// the 15 minutes partners are promised).
pub const IDLE: Duration = Duration::minutes(10);

/// An event as the flow sent it, checked: a known name, a step and an error code that are
/// short slugs (never free text, so never personal data).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FlowEvent {
    pub name: FlowEventName,
    pub step: Option<String>,
    pub error_code: Option<String>,
}

/// A name as the flows write steps and the API writes error codes: a lowercase letter, then
/// lowercase letters, digits, `-` or `_`, at most `max` long, and never four digits in a row
/// (so never a number someone typed: an SSN, a phone, a card, a date).
fn is_slug(s: &str, max: usize) -> bool {
    let mut digits = 0;
    s.len() <= max
        && s.bytes().next().is_some_and(|b| b.is_ascii_lowercase())
        && s.bytes().all(|b| {
            digits = if b.is_ascii_digit() { digits + 1 } else { 0 };
            digits < 4 && (b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_' || b == b'-')
        })
}

/// Parses a recorded event's fields: `name` one of `FlowEventName`'s; `step` (required for
/// `step_viewed`) and `error_code` (required for `error_shown`, refused otherwise) lowercase
/// slugs of at most 40 and 64 characters.
pub fn parse_event(
    name: Option<&str>,
    step: Option<&str>,
    error_code: Option<&str>,
) -> Result<FlowEvent, FieldError> {
    let name = name.ok_or_else(|| FieldError::missing("name"))?;
    let name = FlowEventName::parse(name).ok_or_else(|| {
        FieldError::invalid(
            "name",
            "name must be one of opened, step_viewed, error_shown, exited, completed, handed_off",
        )
    })?;
    let step = step
        .map(|s| {
            is_slug(s, 40).then(|| s.to_owned()).ok_or_else(|| {
                FieldError::invalid(
                    "step",
                    "step must be a step's name: a lowercase letter, then at most 39 lowercase \
                     letters, digits, - or _",
                )
            })
        })
        .transpose()?;
    let error_code = error_code
        .map(|s| {
            is_slug(s, 64).then(|| s.to_owned()).ok_or_else(|| {
                FieldError::invalid(
                    "error_code",
                    "error_code must be an error's code: a lowercase letter, then at most 63 \
                     lowercase letters, digits, - or _",
                )
            })
        })
        .transpose()?;
    if name == FlowEventName::StepViewed && step.is_none() {
        return Err(FieldError::missing("step"));
    }
    match (name, &error_code) {
        (FlowEventName::ErrorShown, None) => Err(FieldError::missing("error_code")),
        (FlowEventName::ErrorShown, Some(_)) | (_, None) => Ok(FlowEvent {
            name,
            step,
            error_code,
        }),
        (_, Some(_)) => Err(FieldError::invalid(
            "error_code",
            "only an error_shown event carries an error_code",
        )),
    }
}

/// An event as recorded: its name, step and when.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Recorded {
    pub name: FlowEventName,
    pub step: Option<String>,
    pub at: DateTime<Utc>,
}

/// How a session ended, as `flow.session_ended` tells it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Summary {
    /// `completed`, `handed_off`, `exited` or `abandoned`.
    pub outcome: &'static str,
    /// The steps the session showed, in the order it first showed them.
    pub steps_reached: Vec<String>,
    pub last_step: Option<String>,
    /// From its first event to the one that ended it (its last, when abandoned).
    pub duration_seconds: i64,
}

/// Where a session stands when its end is looked at.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SessionState {
    Ended(Summary),
    /// Still in use: look again at this instant.
    OpenUntil(DateTime<Utc>),
}

/// Whether a session has ended at `now`, from its events in time order: it ends with its first
/// `completed`, `handed_off` or `exited`, or once `IDLE` passed after its last event (at once
/// when it has none: it is looked at `IDLE` after it opened).
pub fn session_state(events: &[Recorded], now: DateTime<Utc>) -> SessionState {
    let end = events.iter().position(|e| e.name.ends_session());
    let outcome = match end.map(|i| events[i].name) {
        Some(FlowEventName::Completed) => "completed",
        Some(FlowEventName::HandedOff) => "handed_off",
        Some(_) => "exited",
        None => match events.last() {
            Some(last) if last.at + IDLE > now => return SessionState::OpenUntil(last.at + IDLE),
            _ => "abandoned",
        },
    };
    let upto = &events[..end.map_or(events.len(), |i| i + 1)];
    let mut steps_reached: Vec<String> = Vec::new();
    for step in upto.iter().filter_map(|e| e.step.as_ref()) {
        if !steps_reached.contains(step) {
            steps_reached.push(step.clone());
        }
    }
    let duration_seconds = match (upto.first(), upto.last()) {
        (Some(first), Some(last)) => (last.at - first.at).num_seconds().max(0),
        _ => 0,
    };
    SessionState::Ended(Summary {
        outcome,
        last_step: upto.iter().rev().find_map(|e| e.step.clone()),
        steps_reached,
        duration_seconds,
    })
}

/// The enrollment flow's steps in the order it shows them.
pub const ENROLLMENT_STEPS: &[&str] = &[
    "address", "plan", "identity", "credit", "payment", "billing", "review", "done",
];

/// The views of a flow (its `scope`) in the order a customer goes through them; a funnel shows
/// any other step it recorded after these, by how many sessions reached it (a renewal outside
/// its window, a flow with no home to show).
pub fn steps_of(scope: &str) -> &'static [&'static str] {
    match scope {
        "enrollment" => ENROLLMENT_STEPS,
        "update-payment-method" => &["card", "done"],
        "billing" => &["summary", "invoice"],
        "documents" => &["documents"],
        "renewal" => &["plans", "accept", "done"],
        _ => &[],
    }
}

/// One step of a funnel.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FunnelStep {
    pub step: String,
    pub sessions: i64,
    /// Of the sessions started, in tenths of a percent.
    pub share_permille: i64,
}

/// The funnel of an app's sessions of one scope over a period.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Funnel {
    pub sessions_started: i64,
    pub steps: Vec<FunnelStep>,
    pub completed: i64,
    /// Of the sessions started, in tenths of a percent.
    pub completion_permille: i64,
    /// Median time from a completed session's first event to its completion.
    pub median_seconds: Option<i64>,
}

/// `part` of `whole` in tenths of a percent, rounded half up (0 of nothing).
pub fn permille(part: i64, whole: i64) -> i64 {
    if whole <= 0 {
        return 0;
    }
    (part * 2000 + whole) / (2 * whole)
}

/// A permille as a percent with one decimal, the way the API and the dashboard print it.
pub fn percent_text(permille: i64) -> String {
    format!("{}.{}", permille / 10, permille % 10)
}

/// The funnel of `sessions_started` sessions, `sessions` holding the events of each that
/// recorded any (in time order).
pub fn funnel(scope: &str, sessions_started: i64, sessions: &[Vec<Recorded>]) -> Funnel {
    let mut reached: Vec<(String, i64)> = Vec::new();
    let mut durations: Vec<i64> = Vec::new();
    for events in sessions {
        let mut seen: Vec<&str> = Vec::new();
        for step in events.iter().filter_map(|e| e.step.as_deref()) {
            if seen.contains(&step) {
                continue;
            }
            seen.push(step);
            match reached.iter_mut().find(|(s, _)| s == step) {
                Some((_, n)) => *n += 1,
                None => reached.push((step.to_owned(), 1)),
            }
        }
        if let Some(done) = events.iter().find(|e| e.name == FlowEventName::Completed) {
            let first = events.first().map_or(done.at, |e| e.at);
            durations.push((done.at - first).num_seconds().max(0));
        }
    }
    let known = steps_of(scope);
    let rank = |s: &str| known.iter().position(|k| *k == s).unwrap_or(known.len());
    // Stable: unknown steps keep the order they were first seen in among equals.
    reached.sort_by(|a, b| rank(&a.0).cmp(&rank(&b.0)).then(b.1.cmp(&a.1)));
    durations.sort_unstable();
    let completed = i64::try_from(durations.len()).unwrap_or(i64::MAX);
    let median_seconds = match durations.len() {
        0 => None,
        n if n % 2 == 1 => Some(durations[n / 2]),
        n => Some((durations[n / 2 - 1] + durations[n / 2]) / 2),
    };
    Funnel {
        sessions_started,
        steps: reached
            .into_iter()
            .map(|(step, sessions)| FunnelStep {
                share_permille: permille(sessions, sessions_started),
                step,
                sessions,
            })
            .collect(),
        completed,
        completion_permille: permille(completed, sessions_started),
        median_seconds,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(minute: i64) -> DateTime<Utc> {
        DateTime::<Utc>::from_timestamp(1_800_000_000, 0).unwrap() + Duration::minutes(minute)
    }

    fn ev(name: FlowEventName, step: Option<&str>, minute: i64) -> Recorded {
        Recorded {
            name,
            step: step.map(str::to_owned),
            at: at(minute),
        }
    }

    #[test]
    fn events_are_names_and_slugs_only() {
        let e = parse_event(Some("error_shown"), Some("credit"), Some("card_declined")).unwrap();
        assert_eq!(e.name, FlowEventName::ErrorShown);
        assert_eq!(e.error_code.as_deref(), Some("card_declined"));
        assert_eq!(parse_event(None, None, None).unwrap_err().param, "name");
        assert_eq!(
            parse_event(Some("clicked"), None, None).unwrap_err().param,
            "name"
        );
        assert_eq!(
            parse_event(Some("step_viewed"), None, None)
                .unwrap_err()
                .param,
            "step"
        );
        assert_eq!(
            parse_event(Some("step_viewed"), Some("John Smith"), None)
                .unwrap_err()
                .param,
            "step"
        );
        assert_eq!(
            parse_event(Some("error_shown"), Some("credit"), None)
                .unwrap_err()
                .param,
            "error_code"
        );
        assert_eq!(
            parse_event(Some("opened"), Some("address"), Some("x"))
                .unwrap_err()
                .param,
            "error_code"
        );
        for typed in [
            "123-45-6789 ssn",
            "123-45-6789",
            "x4242424242424242",
            "Card_declined",
            "",
        ] {
            assert_eq!(
                parse_event(Some("error_shown"), None, Some(typed))
                    .unwrap_err()
                    .param,
                "error_code",
                "{typed}"
            );
        }
        assert!(parse_event(Some("error_shown"), None, Some("http_500")).is_ok());
    }

    #[test]
    fn a_session_ends_when_left_or_after_being_idle() {
        use FlowEventName::*;
        let events = vec![
            ev(Opened, Some("address"), 0),
            ev(StepViewed, Some("address"), 0),
            ev(StepViewed, Some("plan"), 2),
            ev(Completed, Some("done"), 7),
            ev(Exited, Some("done"), 8),
        ];
        let SessionState::Ended(s) = session_state(&events, at(7)) else {
            panic!("completed")
        };
        assert_eq!(s.outcome, "completed");
        assert_eq!(s.steps_reached, ["address", "plan", "done"]);
        assert_eq!(s.last_step.as_deref(), Some("done"));
        assert_eq!(s.duration_seconds, 420);

        let open = &events[..3];
        assert_eq!(session_state(open, at(5)), SessionState::OpenUntil(at(12)));
        let SessionState::Ended(s) = session_state(open, at(12)) else {
            panic!("abandoned")
        };
        assert_eq!(s.outcome, "abandoned");
        assert_eq!(s.last_step.as_deref(), Some("plan"));
        assert_eq!(s.duration_seconds, 120);

        let SessionState::Ended(s) = session_state(&[], at(10)) else {
            panic!("never used")
        };
        assert_eq!((s.outcome, s.duration_seconds), ("abandoned", 0));
        let handed = [ev(Opened, Some("invoices"), 0), ev(HandedOff, None, 1)];
        let SessionState::Ended(s) = session_state(&handed, at(1)) else {
            panic!("handed off")
        };
        assert_eq!(s.outcome, "handed_off");
    }

    #[test]
    fn the_funnel_counts_each_session_once_per_step() {
        use FlowEventName::*;
        let done = |minutes: i64| {
            vec![
                ev(Opened, Some("address"), 0),
                ev(StepViewed, Some("plan"), 1),
                ev(StepViewed, Some("plan"), 2),
                ev(Completed, Some("done"), minutes),
            ]
        };
        let sessions = vec![
            done(4),
            done(10),
            vec![ev(Opened, Some("address"), 0)],
            vec![
                ev(Opened, Some("address"), 0),
                ev(StepViewed, Some("plan"), 1),
            ],
        ];
        let f = funnel("enrollment", 5, &sessions);
        assert_eq!(f.sessions_started, 5);
        let steps: Vec<(&str, i64, i64)> = f
            .steps
            .iter()
            .map(|s| (s.step.as_str(), s.sessions, s.share_permille))
            .collect();
        assert_eq!(
            steps,
            [("address", 4, 800), ("plan", 3, 600), ("done", 2, 400)]
        );
        assert_eq!((f.completed, f.completion_permille), (2, 400));
        assert_eq!(f.median_seconds, Some(420));
        assert_eq!(percent_text(permille(1, 3)), "33.3");
        assert_eq!(percent_text(permille(2, 3)), "66.7");
        assert_eq!(funnel("billing", 0, &[]).completion_permille, 0);
    }

    #[test]
    fn every_flows_funnel_is_in_the_order_of_its_views() {
        use FlowEventName::*;
        let sessions = vec![
            vec![ev(StepViewed, Some("outside"), 0)],
            vec![ev(StepViewed, Some("outside"), 0)],
            vec![
                ev(StepViewed, Some("plans"), 0),
                ev(StepViewed, Some("accept"), 1),
                ev(StepViewed, Some("done"), 2),
            ],
            vec![ev(StepViewed, Some("plans"), 0)],
        ];
        let f = funnel("renewal", 4, &sessions);
        let steps: Vec<&str> = f.steps.iter().map(|s| s.step.as_str()).collect();
        // Outside the window is reached most, and still comes after the views of a renewal.
        assert_eq!(steps, ["plans", "accept", "done", "outside"]);
        let f = funnel(
            "billing",
            1,
            &[vec![
                ev(StepViewed, Some("invoice"), 0),
                ev(StepViewed, Some("summary"), 1),
            ]],
        );
        let steps: Vec<&str> = f.steps.iter().map(|s| s.step.as_str()).collect();
        assert_eq!(steps, ["summary", "invoice"]);
    }
}
