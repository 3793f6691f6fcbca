//! Recovery after a crash: the jobs a dead worker instance held are taken over within seconds
//! (its heartbeats stop), never while it lives, and run once more only.

use std::time::{Duration, Instant};

use serde_json::json;

use crate::{
    receiver::{Behavior, Receiver},
    webhooks::{create_endpoint, emit, wait_deliveries},
};

both_engines! {
    async fn a_dead_instances_jobs_are_taken_over_within_seconds(app) {
        let mut app = app;
        let receiver = Receiver::start().await;
        receiver.set(Behavior::Hang);
        let endpoint = create_endpoint(&app, &receiver.url, &[]).await;
        let endpoint_uuid = endpoint["uuid"].as_str().unwrap().to_owned();
        let event = emit(&app, None, "invoice.paid").await;
        app.eventually("the first instance is mid-job", || async { receiver.count() == 1 }).await;

        // Another instance starts; the first lives on (it heartbeats), so its job stays its own
        // for longer than an instance may stay silent.
        let second = app.sibling(|_| {}).await;
        let dead_after = Duration::from_millis(app.config.jobs.dead_after_ms);
        tokio::time::sleep(dead_after + Duration::from_secs(1)).await;
        assert_eq!(receiver.count(), 1, "a live instance's job was taken over");

        // The first instance dies (as kill -9 would leave it): its lease still has ~50 s to run
        // on the clock, but its heartbeats stop, and the second takes the job over.
        receiver.set(Behavior::Ok);
        let died = Instant::now();
        app.workers.take().unwrap().kill();
        second.eventually("the job is taken over", || async { receiver.count() == 2 }).await;
        let took = died.elapsed();
        assert!(took < dead_after + Duration::from_secs(3), "taken over after {took:?}");
        println!("taken over {took:?} after the instance died");

        let log = wait_deliveries(&second, &endpoint_uuid, 1).await;
        assert_eq!(log[0]["status"], json!("succeeded"));
        assert_eq!(log[0]["attempt"], json!(2), "the dead instance's attempt counts");
        assert_eq!(receiver.hits()[1].header("webhook-id"), event.to_string());
        // Nothing runs a third time.
        tokio::time::sleep(Duration::from_millis(500)).await;
        assert_eq!(receiver.count(), 2);
        assert_eq!(server::store::jobs::count_by_state(&second.state.db, "done").await.unwrap(), 1);
    }
}
