// Copy buttons beside secrets shown once: each button names the field it copies. The buttons
// stay hidden without scripts, where the field itself can still be selected and copied.
document.querySelectorAll("button[data-copy]").forEach((button) => {
  const field = document.getElementById(button.dataset.copy);
  const status = document.getElementById(button.dataset.copy + "-copied");
  if (!field) return;
  button.hidden = false;
  button.addEventListener("click", async () => {
    field.select();
    try {
      await navigator.clipboard.writeText(field.value);
      if (status) status.textContent = "Copied.";
    } catch {
      if (status) status.textContent = "Selected: press Ctrl+C (or ⌘C) to copy.";
    }
  });
});
