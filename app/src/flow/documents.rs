//! The documents flow (`/flow/documents`): the contract's dates, the documents in force at the
//! home (EFL, terms of service, customer rights, the letter of authorization when there is
//! one) opening their PDFs, and every version there was: superseded, and queued for a renewal.

use leptos::prelude::*;

use super::{
    events::views,
    reader::Reader,
    session::{ErrorNotice, Flow, Task},
};
use crate::{
    format::long_date,
    views::{ActiveDocuments, Document},
};

#[component]
pub fn DocumentsFlow(flow: Flow) -> impl IntoView {
    let location = flow.account.with_untracked(|a| {
        a.as_ref()
            .and_then(|a| a.locations.first())
            .map(|l| (l.uuid.clone(), l.plan_name.clone()))
    });
    let Some((uuid, plan)) = location else {
        return view! {
            <section class="steps" data-step=views(|| Some("none"))>
                <h2>"Your documents"</h2>
                <p data-testid="no-location">"Your documents appear here once your service address is confirmed."</p>
            </section>
        }
        .into_any();
    };
    let shown = RwSignal::new(None::<(ActiveDocuments, Vec<Document>)>);
    let load = Task::new();
    let uuid = StoredValue::new(uuid);
    let read = move || {
        let at = uuid.get_value();
        flow.call(
            load,
            async move |c| Ok((c.documents(&at).await?, c.all_documents(&at).await?.data)),
            move |docs| {
                shown.set(Some(docs));
                // Seeing them is what the flow is for.
                flow.done.set(true);
            },
        );
    };
    read();
    let reader = Reader::new();
    view! {
        <section class="steps" data-step=views(|| Some("documents"))>
            <h2>"Your documents"</h2>
            <ErrorNotice task=load retry=move |_| read()/>
            <Show when=move || load.pending.get()>
                <p class="muted" role="status">"Loading your documents…"</p>
            </Show>
            {move || {
                shown
                    .get()
                    .map(|(active, all)| {
                        let plan = plan.clone().unwrap_or_else(|| "Your plan".to_owned());
                        let mut current = vec![
                            ("efl", active.efl.clone()),
                            ("tos", active.tos.clone()),
                            ("yrac", active.yrac.clone()),
                        ];
                        if let Some(loa) = active.loa.clone() {
                            current.push(("loa", loa));
                        }
                        view! {
                            <div class="card summary" data-testid="contract">
                                <p class="lead">{plan}</p>
                                <dl class="facts">
                                    <div><dt>"Started"</dt><dd data-testid="contract-start">{long_date(&active.contract_start)}</dd></div>
                                    <div>
                                        <dt>"Ends"</dt>
                                        <dd data-testid="contract-end">
                                            {active
                                                .contract_end
                                                .as_deref()
                                                .map(long_date)
                                                .unwrap_or_else(|| "Month-to-month, no end date".to_owned())}
                                        </dd>
                                    </div>
                                </dl>
                            </div>
                            <h3>"In force"</h3>
                            <ul class="documents-list" data-testid="active-documents">
                                {current
                                    .into_iter()
                                    .map(|(kind, url)| view! { <li>{link(reader, kind, kind_name(kind).to_owned(), url)}</li> })
                                    .collect_view()}
                            </ul>
                            <h3>"History"</h3>
                            <table class="history" data-testid="history">
                                <caption class="visually-hidden">"Every version of your documents"</caption>
                                <thead>
                                    <tr><th scope="col">"Document"</th><th scope="col">"From"</th><th scope="col">"Status"</th></tr>
                                </thead>
                                <tbody>
                                    {all
                                        .into_iter()
                                        .map(|d| view! {
                                            <tr data-status=d.status.clone()>
                                                <th scope="row">
                                                    {link(reader, &d.kind, format!("{} ({})", kind_name(&d.kind), d.version), d.url)}
                                                </th>
                                                <td>{long_date(&d.effective_date)}</td>
                                                <td>{status_name(&d.status)}</td>
                                            </tr>
                                        })
                                        .collect_view()}
                                </tbody>
                            </table>
                        }
                    })
            }}
            {reader.dialog("documents-reader".to_owned())}
        </section>
    }
    .into_any()
}

/// A document's link: read in the flow's dialog where it has an HTML rendition (the contract's
/// EFL, terms and rights), else its PDF.
fn link(reader: Reader, kind: &str, name: String, url: String) -> AnyView {
    if matches!(kind, "efl" | "tos" | "yrac") {
        reader.link(name, url).into_any()
    } else {
        view! { <a href=url target="_blank" rel="noopener">{name}</a> }.into_any()
    }
}

fn kind_name(kind: &str) -> &'static str {
    match kind {
        "efl" => "Electricity Facts Label",
        "tos" => "Terms of Service",
        "yrac" => "Your Rights as a Customer",
        "loa" => "Letter of Authorization",
        "renewal_notice" => "Renewal notice",
        _ => "Document",
    }
}

fn status_name(status: &str) -> &'static str {
    match status {
        "active" => "In force",
        "superseded" => "Replaced",
        "queued" => "Starts with your renewal",
        _ => "Unknown",
    }
}
