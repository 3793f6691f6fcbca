// The authentication page (`/hosted/authenticate`): the customer confirms a payment their bank
// asked about in the card processor's own component, from the processor's script the page loads
// first. Nothing of the card passes here; the processor tells the service how it ended.
"use strict";
(() => {
  const host = document.getElementById("authenticate");
  const button = document.getElementById("authenticate-button");
  const status = document.getElementById("authenticate-status");
  if (!host || !button || !status) return;
  button.addEventListener("click", async () => {
    if (typeof window.Stripe !== "function") {
      status.textContent = "Your bank's check could not be loaded. Please try again later.";
      return;
    }
    button.disabled = true;
    host.dataset.state = "confirming";
    status.textContent = "Waiting for your bank…";
    let result;
    try {
      result = await window.Stripe(host.dataset.publishableKey).confirmCardPayment(host.dataset.clientSecret);
    } catch {
      result = { error: { message: "The card processor could not be reached. Please try again." } };
    }
    if (result && result.error) {
      host.dataset.state = "failed";
      status.textContent = result.error.message || "Your bank did not confirm the payment. Please try again.";
      button.disabled = false;
      return;
    }
    host.dataset.state = "confirmed";
    button.hidden = true;
    status.textContent = "Thank you: your bank confirmed the payment. Your bill shows it as paid as soon as it has gone through.";
  });
})();
