// An SMTP server on loopback that keeps every message a deployment sends, for the browser tests
// of live apps (whose e-mails no API lists): point the deployment's `SMTP_URL` at `url`, then
// wait for a message with `next`.

import { SMTPServer } from "smtp-server";
import { simpleParser } from "mailparser";

export async function startMailSink() {
  const messages = [];
  const waiting = [];
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ["STARTTLS", "AUTH"],
    logger: false,
    onData(stream, _session, callback) {
      simpleParser(stream)
        .then((mail) => {
          const message = { to: mail.to?.text ?? "", subject: mail.subject ?? "", text: mail.text ?? "", html: mail.html || "" };
          messages.push(message);
          for (const w of waiting.splice(0)) w();
          callback();
        })
        .catch(callback);
    },
  });
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.server.address();
  return {
    url: `smtp://127.0.0.1:${port}`,
    messages,
    /// The first message (oldest first) for which `match` holds, waited for up to `timeoutMs`.
    async next(match, timeoutMs = 60_000) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const found = messages.find(match);
        if (found) return found;
        const left = deadline - Date.now();
        if (left <= 0) throw new Error(`no such e-mail among ${JSON.stringify(messages.map((m) => m.subject))}`);
        await new Promise((resolve) => {
          waiting.push(resolve);
          setTimeout(resolve, Math.min(left, 1000));
        });
      }
    },
    close: () => new Promise((resolve) => server.close(resolve)),
  };
}
