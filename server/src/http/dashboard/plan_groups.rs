//! An app's plan groups in the dashboard: the rules the pricing model reads. Everyone who may
//! see the app reads its groups and each group's versions; only the operator creates and edits
//! them (a partner member gets 404 from those pages and forms, a member of another organisation
//! from every page). A form that does not parse comes back with each wrong field's message
//! beside it (422) and changes nothing. Changes go through `services::plan_groups`.

use axum::{
    extract::{Path, Query, State},
    http::StatusCode,
    routing::get,
    Form, Router,
};
use leptos::prelude::*;
use serde::Deserialize;
use uuid::Uuid;

use super::{html, member_app, see_other, views, Dash, Done, PageResult};
use crate::{
    domain::{plan_groups::GroupInput, FieldError},
    http::{error::ApiError, AppState},
    services::{
        self,
        plan_groups::{GroupHistory, PlanGroupRefused},
    },
    store::{
        self,
        apps::AppRow,
        market::{PlanGroupRow, PlanGroupVersionRow},
    },
};

pub fn routes() -> Router<AppState> {
    Router::new()
        .route(
            "/dashboard/apps/{app}/plan-groups",
            get(groups_page).post(create_group),
        )
        .route("/dashboard/apps/{app}/plan-groups/new", get(new_group_page))
        .route(
            "/dashboard/apps/{app}/plan-groups/{group}",
            get(group_page).post(edit_group),
        )
        .route(
            "/dashboard/apps/{app}/plan-groups/{group}/edit",
            get(edit_group_page),
        )
}

/// The app, if this member may see it and is the operator: creating and editing groups is the
/// operator's, and to anyone else those pages do not exist.
async fn operator_app(state: &AppState, dash: &Dash, app: Uuid) -> Result<AppRow, ApiError> {
    let app = member_app(state, dash, app).await?;
    if !dash.member().is_operator() {
        return Err(ApiError::not_found("page"));
    }
    Ok(app)
}

fn base(app: &AppRow) -> String {
    format!("/dashboard/apps/{}/plan-groups", app.uuid)
}

fn done_message(done: Option<&str>) -> Option<&'static str> {
    Some(match done? {
        "created" => "The plan group was created.",
        "edited" => "The plan group was saved as a new version. Plans priced from now on use it; plans priced before keep theirs.",
        "unchanged" => "Nothing was changed.",
        _ => return None,
    })
}

/// A failure of the service is a 500; a refusal the caller shows.
fn refusal(e: services::Error<PlanGroupRefused>) -> Result<PlanGroupRefused, ApiError> {
    match e {
        services::Error::Refused(why) => Ok(why),
        services::Error::Failed(e) => Err(ApiError::internal(e)),
    }
}

// ---------------------------------------------------------------------------------------------
// Reading

async fn groups_page(
    State(state): State<AppState>,
    dash: Dash,
    Path(app): Path<Uuid>,
) -> PageResult {
    let app = member_app(&state, &dash, app).await?;
    let groups = store::market::plan_groups_of_app(&state.db, app.uuid).await?;
    Ok(html(StatusCode::OK, groups_view(&dash, &app, &groups)))
}

async fn group_page(
    State(state): State<AppState>,
    dash: Dash,
    Path((app, group)): Path<(Uuid, Uuid)>,
    Query(done): Query<Done>,
) -> PageResult {
    let app = member_app(&state, &dash, app).await?;
    let history = services::plan_groups::group_history(&state.db, app.uuid, group)
        .await
        .map_err(|e| match refusal(e) {
            Ok(_) => ApiError::not_found("plan group"),
            Err(e) => e,
        })?;
    Ok(html(
        StatusCode::OK,
        group_view(&dash, &app, &history, done_message(done.done.as_deref())),
    ))
}

// ---------------------------------------------------------------------------------------------
// Creating and editing (the operator's)

/// A plan group's form as posted (every field text, parsed by the service).
#[derive(Debug, Default, Deserialize)]
struct GroupForm {
    #[serde(default)]
    csrf: String,
    #[serde(default)]
    name: String,
    #[serde(default)]
    plan_type: String,
    #[serde(default)]
    term_months: String,
    #[serde(default)]
    base_charge_cents_per_month: String,
    #[serde(default)]
    energy_margin_cents_per_kwh: String,
    #[serde(default)]
    partner_commission_cents_per_month: String,
    #[serde(default)]
    solar_buyback_cents_per_kwh: String,
    #[serde(default)]
    early_termination_fee_cents: String,
    #[serde(default)]
    renewable_percent: String,
    #[serde(default)]
    tos_version: String,
    /// A checkbox: present (any value) when ticked.
    #[serde(default)]
    is_month_to_month_default: Option<String>,
    #[serde(default)]
    position: String,
    /// The version the edit form was read at.
    #[serde(default)]
    version: String,
}

impl GroupForm {
    fn input(&self) -> GroupInput<'_> {
        GroupInput {
            name: &self.name,
            plan_type: &self.plan_type,
            term_months: &self.term_months,
            base_charge_cents_per_month: &self.base_charge_cents_per_month,
            energy_margin_cents_per_kwh: &self.energy_margin_cents_per_kwh,
            partner_commission_cents_per_month: &self.partner_commission_cents_per_month,
            solar_buyback_cents_per_kwh: &self.solar_buyback_cents_per_kwh,
            early_termination_fee_cents: &self.early_termination_fee_cents,
            renewable_percent: &self.renewable_percent,
            tos_version: &self.tos_version,
            is_month_to_month_default: self.is_month_to_month_default.is_some(),
            position: &self.position,
        }
    }

    /// The form filled with a group's current values.
    fn of(g: &PlanGroupRow) -> GroupForm {
        GroupForm {
            csrf: String::new(),
            name: g.name.clone(),
            plan_type: g.plan_type.clone(),
            term_months: g.term_months.to_string(),
            base_charge_cents_per_month: g.base_charge_cents_per_month.to_string(),
            energy_margin_cents_per_kwh: g.energy_margin_cents_per_kwh.clone(),
            partner_commission_cents_per_month: g.partner_commission_cents_per_month.to_string(),
            solar_buyback_cents_per_kwh: g.solar_buyback_cents_per_kwh.clone(),
            early_termination_fee_cents: g.early_termination_fee_cents.to_string(),
            renewable_percent: g.renewable_percent.to_string(),
            tos_version: g.tos_version.clone(),
            is_month_to_month_default: g.is_month_to_month_default.then(|| "true".to_owned()),
            position: g.position.to_string(),
            version: g.version.to_string(),
        }
    }

    /// A new group's form: a 12-month fixed plan with the usual fees, to adjust.
    fn blank() -> GroupForm {
        GroupForm {
            plan_type: "fixed".into(),
            term_months: "12".into(),
            base_charge_cents_per_month: "995".into(),
            energy_margin_cents_per_kwh: "4.2000".into(),
            partner_commission_cents_per_month: "500".into(),
            solar_buyback_cents_per_kwh: "0.0000".into(),
            early_termination_fee_cents: "0".into(),
            renewable_percent: "31".into(),
            tos_version: "2026.1".into(),
            ..GroupForm::default()
        }
    }
}

async fn new_group_page(
    State(state): State<AppState>,
    dash: Dash,
    Path(app): Path<Uuid>,
) -> PageResult {
    let app = operator_app(&state, &dash, app).await?;
    Ok(html(
        StatusCode::OK,
        form_view(&dash, &app, None, &GroupForm::blank(), &[], None),
    ))
}

async fn create_group(
    State(state): State<AppState>,
    dash: Dash,
    Path(app): Path<Uuid>,
    Form(form): Form<GroupForm>,
) -> PageResult {
    dash.check(&form.csrf).await?;
    let app = operator_app(&state, &dash, app).await?;
    match services::plan_groups::create_group(
        &state.db,
        &state.clock,
        &dash.actor(),
        app.uuid,
        &form.input(),
    )
    .await
    {
        Ok(group) => Ok(see_other(&format!(
            "{}/{}?done=created",
            base(&app),
            group.uuid
        ))),
        Err(e) => {
            let (errors, message) = match refusal(e)? {
                PlanGroupRefused::Fields(errors) => (errors, None),
                other => (Vec::new(), Some(other.to_string())),
            };
            Ok(html(
                StatusCode::UNPROCESSABLE_ENTITY,
                form_view(&dash, &app, None, &form, &errors, message.as_deref()),
            ))
        }
    }
}

async fn edit_group_page(
    State(state): State<AppState>,
    dash: Dash,
    Path((app, group)): Path<(Uuid, Uuid)>,
) -> PageResult {
    let app = operator_app(&state, &dash, app).await?;
    let group = store::market::plan_group_of_app(&state.db, app.uuid, group)
        .await?
        .ok_or_else(|| ApiError::not_found("plan group"))?;
    Ok(html(
        StatusCode::OK,
        form_view(&dash, &app, Some(&group), &GroupForm::of(&group), &[], None),
    ))
}

async fn edit_group(
    State(state): State<AppState>,
    dash: Dash,
    Path((app, group)): Path<(Uuid, Uuid)>,
    Form(form): Form<GroupForm>,
) -> PageResult {
    dash.check(&form.csrf).await?;
    let app = operator_app(&state, &dash, app).await?;
    let current = store::market::plan_group_of_app(&state.db, app.uuid, group)
        .await?
        .ok_or_else(|| ApiError::not_found("plan group"))?;
    // A form without the version it was read at edits the version it is shown now.
    let expected = form.version.trim().parse().unwrap_or(current.version);
    let result = services::plan_groups::edit_group(
        &state.db,
        &state.clock,
        &dash.actor(),
        app.uuid,
        current.uuid,
        expected,
        &form.input(),
    )
    .await;
    match result {
        Ok(edited) => {
            let done = if edited.changed {
                "edited"
            } else {
                "unchanged"
            };
            Ok(see_other(&format!(
                "{}/{}?done={done}",
                base(&app),
                current.uuid
            )))
        }
        Err(e) => {
            let (status, errors, message) = match refusal(e)? {
                PlanGroupRefused::NotFound => return Err(ApiError::not_found("plan group").into()),
                PlanGroupRefused::Fields(errors) => {
                    (StatusCode::UNPROCESSABLE_ENTITY, errors, None)
                }
                stale @ PlanGroupRefused::Stale { .. } => {
                    (StatusCode::CONFLICT, Vec::new(), Some(stale.to_string()))
                }
            };
            Ok(html(
                status,
                form_view(
                    &dash,
                    &app,
                    Some(&current),
                    &form,
                    &errors,
                    message.as_deref(),
                ),
            ))
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Pages

fn plan_type_label(plan_type: &str) -> &'static str {
    match plan_type {
        "fixed" => "Fixed",
        "month_to_month" => "Month-to-month",
        _ => "Other",
    }
}

fn dollars(cents: i64) -> String {
    format!("${}.{:02}", cents / 100, (cents % 100).abs())
}

fn yes_no(b: bool) -> &'static str {
    if b {
        "yes"
    } else {
        "no"
    }
}

fn groups_view(dash: &Dash, app: &AppRow, groups: &[PlanGroupRow]) -> String {
    let nav = dash.nav();
    let base = base(app);
    let rows = groups
        .iter()
        .map(|g| {
            let href = format!("{base}/{}", g.uuid);
            let name = g.name.clone();
            let kind = plan_type_label(&g.plan_type);
            let term = format!("{} mo", g.term_months);
            let margin = g.energy_margin_cents_per_kwh.clone();
            let charge = dollars(g.base_charge_cents_per_month);
            let default = yes_no(g.is_month_to_month_default);
            let version = g.version.to_string();
            view! {
                <tr>
                    <td><a href=href>{name}</a></td>
                    <td>{kind}</td>
                    <td>{term}</td>
                    <td>{charge}</td>
                    <td>{margin}</td>
                    <td>{default}</td>
                    <td>{version}</td>
                </tr>
            }
        })
        .collect_view();
    let create = nav.operator.then(|| {
        let href = format!("{base}/new");
        view! { <p><a href=href>"New plan group"</a></p> }
    });
    let back = format!("/dashboard/apps/{}", app.uuid);
    let title = format!("Plan groups of {}", app.display_name);
    let body = view! {
        <p><a href=back>"← Back to the app"</a></p>
        <h1>{title.clone()}</h1>
        <p>"The rules the pricing model reads: each plan the app offers is priced from one of these. "
           "A priced plan keeps the values it was priced with; an edit makes a new version for plans priced after it."</p>
        <div class="table-wrap">
            <table>
                <thead><tr>
                    <th scope="col">"Group"</th><th scope="col">"Type"</th><th scope="col">"Term"</th>
                    <th scope="col">"Base charge"</th><th scope="col">"Energy margin (¢/kWh)"</th>
                    <th scope="col">"Month-to-month default"</th><th scope="col">"Version"</th>
                </tr></thead>
                <tbody>{rows}</tbody>
            </table>
        </div>
        {create}
    }
    .into_any();
    views::document(&title, Some(&nav), body)
}

/// The values of a group (or one of its versions) as a table's cells.
struct Values<'a> {
    name: &'a str,
    plan_type: &'a str,
    term_months: i64,
    base_charge_cents_per_month: i64,
    energy_margin_cents_per_kwh: &'a str,
    partner_commission_cents_per_month: i64,
    solar_buyback_cents_per_kwh: &'a str,
    early_termination_fee_cents: i64,
    renewable_percent: i64,
    tos_version: &'a str,
    is_month_to_month_default: bool,
    position: i64,
}

impl<'a> From<&'a PlanGroupVersionRow> for Values<'a> {
    fn from(v: &'a PlanGroupVersionRow) -> Self {
        Values {
            name: &v.name,
            plan_type: &v.plan_type,
            term_months: v.term_months,
            base_charge_cents_per_month: v.base_charge_cents_per_month,
            energy_margin_cents_per_kwh: &v.energy_margin_cents_per_kwh,
            partner_commission_cents_per_month: v.partner_commission_cents_per_month,
            solar_buyback_cents_per_kwh: &v.solar_buyback_cents_per_kwh,
            early_termination_fee_cents: v.early_termination_fee_cents,
            renewable_percent: v.renewable_percent,
            tos_version: &v.tos_version,
            is_month_to_month_default: v.is_month_to_month_default,
            position: v.position,
        }
    }
}

impl<'a> From<&'a PlanGroupRow> for Values<'a> {
    fn from(g: &'a PlanGroupRow) -> Self {
        Values {
            name: &g.name,
            plan_type: &g.plan_type,
            term_months: g.term_months,
            base_charge_cents_per_month: g.base_charge_cents_per_month,
            energy_margin_cents_per_kwh: &g.energy_margin_cents_per_kwh,
            partner_commission_cents_per_month: g.partner_commission_cents_per_month,
            solar_buyback_cents_per_kwh: &g.solar_buyback_cents_per_kwh,
            early_termination_fee_cents: g.early_termination_fee_cents,
            renewable_percent: g.renewable_percent,
            tos_version: &g.tos_version,
            is_month_to_month_default: g.is_month_to_month_default,
            position: g.position,
        }
    }
}

impl Values<'_> {
    /// Each value with its label, in the form's order.
    fn labelled(&self) -> Vec<(&'static str, String)> {
        vec![
            ("Name", self.name.to_owned()),
            ("Plan type", plan_type_label(self.plan_type).to_owned()),
            ("Term (months)", self.term_months.to_string()),
            (
                "Base charge (cents a month)",
                self.base_charge_cents_per_month.to_string(),
            ),
            (
                "Energy margin (cents per kWh)",
                self.energy_margin_cents_per_kwh.to_owned(),
            ),
            (
                "Partner commission (cents a month)",
                self.partner_commission_cents_per_month.to_string(),
            ),
            (
                "Solar buyback (cents per kWh)",
                self.solar_buyback_cents_per_kwh.to_owned(),
            ),
            (
                "Early termination fee (cents)",
                self.early_termination_fee_cents.to_string(),
            ),
            ("Renewable (%)", self.renewable_percent.to_string()),
            ("Terms of Service version", self.tos_version.to_owned()),
            (
                "Month-to-month default",
                yes_no(self.is_month_to_month_default).to_owned(),
            ),
            ("Position", self.position.to_string()),
        ]
    }
}

fn group_view(dash: &Dash, app: &AppRow, history: &GroupHistory, notice: Option<&str>) -> String {
    let nav = dash.nav();
    let g = &history.group;
    let list = base(app);
    let current = Values::from(g)
        .labelled()
        .into_iter()
        .map(|(label, value)| view! { <tr><th scope="row">{label}</th><td>{value}</td></tr> })
        .collect_view();
    let headers = Values::from(g)
        .labelled()
        .into_iter()
        .map(|(label, _)| view! { <th scope="col">{label}</th> })
        .collect_view();
    let versions = history
        .versions
        .iter()
        .map(|v| {
            let number = v.version.to_string();
            let when = views::time(v.created_at);
            let who = v.changed_by.clone();
            let cells = Values::from(v)
                .labelled()
                .into_iter()
                .map(|(_, value)| view! { <td>{value}</td> })
                .collect_view();
            view! {
                <tr>
                    <td>{number}</td>
                    <td>{when}</td>
                    <td>{who}</td>
                    {cells}
                </tr>
            }
        })
        .collect_view();
    let edit = nav.operator.then(|| {
        let href = format!("{list}/{}/edit", g.uuid);
        view! { <p><a href=href>"Edit this plan group"</a></p> }
    });
    let title = g.name.clone();
    let meta = format!(
        "Version {} · plan group {} of {}",
        g.version, g.uuid, app.display_name
    );
    let body = view! {
        <p><a href=list>"← All plan groups"</a></p>
        <h1>{title.clone()}</h1>
        <p class="muted">{meta}</p>
        {views::messages(notice, None)}
        <section class="card">
            <h2>"Current values"</h2>
            <div class="table-wrap">
                <table><tbody>{current}</tbody></table>
            </div>
            {edit}
        </section>
        <section class="card">
            <h2>"Versions"</h2>
            <p>"Every version of this group, newest first. Plans keep the version they were priced with."</p>
            <div class="table-wrap">
                <table>
                    <thead><tr>
                        <th scope="col">"Version"</th><th scope="col">"When"</th><th scope="col">"Who"</th>
                        {headers}
                    </tr></thead>
                    <tbody>{versions}</tbody>
                </table>
            </div>
        </section>
    }
    .into_any();
    views::document(&title, Some(&nav), body)
}

/// One labelled text field of the form, with its error (if any) beside it.
fn field(
    id: &'static str,
    label: &'static str,
    value: &str,
    errors: &[FieldError],
    hint: Option<&'static str>,
) -> impl IntoView {
    let error = errors
        .iter()
        .find(|e| e.param == id)
        .map(|e| e.message.clone());
    let described = error.as_ref().map(|_| format!("{id}-error"));
    let invalid = error.as_ref().map(|_| "true");
    let message = error.map(|m| {
        view! { <p class="field-error" id=format!("{id}-error")>{m}</p> }
    });
    let hint = hint.map(|h| view! { <span class="muted">{h}</span> });
    let value = value.to_owned();
    view! {
        <label for=id>{label}</label>
        {hint}
        <input id=id name=id type="text" value=value aria-invalid=invalid aria-describedby=described/>
        {message}
    }
}

fn form_view(
    dash: &Dash,
    app: &AppRow,
    group: Option<&PlanGroupRow>,
    form: &GroupForm,
    errors: &[FieldError],
    message: Option<&str>,
) -> String {
    let nav = dash.nav();
    let list = base(app);
    let (title, action, back, submit) = match group {
        Some(g) => (
            format!("Edit {}", g.name),
            format!("{list}/{}", g.uuid),
            format!("{list}/{}", g.uuid),
            "Save as a new version",
        ),
        None => (
            format!("New plan group of {}", app.display_name),
            list.clone(),
            list.clone(),
            "Create plan group",
        ),
    };
    let summary = (!errors.is_empty())
        .then(|| "Some values are not right; see the messages beside them.".to_owned())
        .or_else(|| message.map(str::to_owned));
    let version = group.map(|_| {
        let v = form.version.clone();
        view! { <input type="hidden" name="version" value=v/> }
    });
    let fixed = form.plan_type.trim() != "month_to_month";
    let type_error = errors
        .iter()
        .find(|e| e.param == "plan_type")
        .map(|e| view! { <p class="field-error" id="plan_type-error">{e.message.clone()}</p> });
    let default_error = errors
        .iter()
        .find(|e| e.param == "is_month_to_month_default")
        .map(|e| {
            view! { <p class="field-error" id="is_month_to_month_default-error">{e.message.clone()}</p> }
        });
    let default_checked = form.is_month_to_month_default.is_some();
    let body = view! {
        <p><a href=back>"← Back"</a></p>
        <h1>{title.clone()}</h1>
        {views::messages(None, summary.as_deref())}
        <section class="card">
            <p>"Amounts are in cents; rates in cents per kWh with up to 4 decimal places. "
               "Plans priced before a change keep what they were priced with."</p>
            <form method="post" action=action>
                {views::csrf_field(&nav.csrf)}
                {version}
                {field("name", "Name", &form.name, errors, None)}
                <label for="plan_type">"Plan type"</label>
                <select id="plan_type" name="plan_type">
                    <option value="fixed" selected=fixed>"Fixed"</option>
                    <option value="month_to_month" selected={!fixed}>"Month-to-month"</option>
                </select>
                {type_error}
                {field("term_months", "Term (months)", &form.term_months, errors, Some("1 to 36 for a fixed plan; 1 for month-to-month"))}
                {field("base_charge_cents_per_month", "Base charge (cents a month)", &form.base_charge_cents_per_month, errors, None)}
                {field("energy_margin_cents_per_kwh", "Energy margin over wholesale (cents per kWh)", &form.energy_margin_cents_per_kwh, errors, None)}
                {field("partner_commission_cents_per_month", "Partner commission (cents a month)", &form.partner_commission_cents_per_month, errors, None)}
                {field("solar_buyback_cents_per_kwh", "Solar buyback (cents per kWh)", &form.solar_buyback_cents_per_kwh, errors, None)}
                {field("early_termination_fee_cents", "Early termination fee (cents)", &form.early_termination_fee_cents, errors, Some("Not stated on plans or charged: the Terms of Service promise no early termination fee"))}
                {field("renewable_percent", "Renewable (%)", &form.renewable_percent, errors, None)}
                {field("tos_version", "Terms of Service version", &form.tos_version, errors, None)}
                {field("position", "Position (order among the app's groups; blank: last)", &form.position, errors, None)}
                <label class="check">
                    <input type="checkbox" name="is_month_to_month_default" value="true" checked=default_checked/>
                    " The app's month-to-month default (what an unrenewed contract rolls onto)"
                </label>
                {default_error}
                <button type="submit">{submit}</button>
            </form>
        </section>
    }
    .into_any();
    views::document(&title, Some(&nav), body)
}
