//! The extreme-weather emergency days: nobody is disconnected for non-payment on one, and
//! every customer asking is owed a payment plan. Every member reads them; only the operator
//! adds or removes one (`services::disconnection::set_weather_emergency`, audited).

use axum::{
    extract::{Query, State},
    http::StatusCode,
    routing::{get, post},
    Form, Router,
};
use chrono::NaiveDate;
use leptos::prelude::*;
use serde::Deserialize;

use super::{html, see_other, views, Dash, Done, PageResult};
use crate::{
    domain::FieldError,
    http::{error::ApiError, AppState},
    services,
};

const PAGE: &str = "/dashboard/weather-emergencies";

pub fn routes() -> Router<AppState> {
    Router::new()
        .route(PAGE, get(page))
        .route("/dashboard/weather-emergencies/set", post(set))
}

fn done_message(done: Option<&str>) -> Option<&'static str> {
    Some(match done? {
        "added" => "The emergency day was saved: nobody is disconnected on it.",
        "removed" => "The emergency day was removed.",
        _ => return None,
    })
}

async fn page(State(state): State<AppState>, dash: Dash, Query(done): Query<Done>) -> PageResult {
    let days = services::disconnection::weather_emergencies(&state.db).await?;
    let nav = dash.nav();
    let operator = nav.operator;
    let csrf = dash.csrf.clone();
    let rows = days
        .into_iter()
        .map(|(day, note)| {
            let csrf = csrf.clone();
            let remove = operator.then(|| {
                view! {
                    <form method="post" action="/dashboard/weather-emergencies/set">
                        <input type="hidden" name="csrf" value=csrf/>
                        <input type="hidden" name="day" value=day.to_string()/>
                        <input type="hidden" name="action" value="remove"/>
                        <button type="submit">"Remove"</button>
                    </form>
                }
            });
            view! {
                <tr>
                    <td>{app::format::long_date(day)}</td>
                    <td>{note}</td>
                    <td>{remove}</td>
                </tr>
            }
        })
        .collect_view();
    let form = operator.then(|| {
        let csrf = csrf.clone();
        view! {
            <form method="post" action="/dashboard/weather-emergencies/set" class="card">
                <input type="hidden" name="csrf" value=csrf/>
                <input type="hidden" name="action" value="add"/>
                <label for="day">"Day (YYYY-MM-DD)"</label>
                <input id="day" name="day" type="date" required/>
                <label for="note">"Note (the advisory or declaration)"</label>
                <input id="note" name="note" type="text"/>
                <button type="submit">"Add emergency day"</button>
            </form>
        }
    });
    let body = view! {
        <h1>"Weather emergencies"</h1>
        {views::messages(done_message(done.done.as_deref()), None)}
        <p>
            "Days of an extreme-weather emergency in the market: nobody is disconnected for \
             non-payment on them (a disconnection due then waits for the next allowed day), and \
             every customer who asks is offered a payment plan."
        </p>
        {form}
        <div class="table-wrap">
            <table>
                <thead><tr>
                    <th scope="col">"Day"</th><th scope="col">"Note"</th><th scope="col"></th>
                </tr></thead>
                <tbody>{rows}</tbody>
            </table>
        </div>
    }
    .into_any();
    Ok(html(
        StatusCode::OK,
        views::document("Weather emergencies", Some(&nav), body),
    ))
}

#[derive(Deserialize)]
struct SetForm {
    #[serde(default)]
    csrf: String,
    #[serde(default)]
    day: String,
    #[serde(default)]
    note: String,
    #[serde(default)]
    action: String,
}

async fn set(State(state): State<AppState>, dash: Dash, Form(form): Form<SetForm>) -> PageResult {
    dash.check(&form.csrf).await?;
    dash.operator_only("keeps the weather emergency days")?;
    let day = NaiveDate::parse_from_str(form.day.trim(), "%Y-%m-%d").map_err(|_| {
        ApiError::from(FieldError::invalid("day", "day must be a date, YYYY-MM-DD"))
    })?;
    let on = match form.action.as_str() {
        "add" => true,
        "remove" => false,
        _ => {
            return Err(ApiError::from(FieldError::invalid(
                "action",
                "action must be add or remove",
            ))
            .into())
        }
    };
    services::disconnection::set_weather_emergency(
        &state.db,
        &state.clock,
        &dash.actor(),
        day,
        &form.note,
        on,
    )
    .await?;
    Ok(see_other(&format!(
        "{PAGE}?done={}",
        if on { "added" } else { "removed" }
    )))
}
