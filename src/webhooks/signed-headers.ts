import { Webhook } from 'standardwebhooks';

/**
 * Standard Webhooks v1 over `<webhook-id>.<webhook-timestamp>.<body>`, sent in `x-svc-signature` and,
 * identically, in `webhook-signature` (docs/contract-rules.md, webhooks.signature and webhooks.headers).
 * During a secret rotation's overlap there are two secrets: the header then holds both signatures,
 * space-separated, the new secret's first, so that a receiver verifying with either succeeds.
 */
export function signedHeaders(secrets: readonly string[], eventId: string, at: Date, body: string): Record<string, string> {
  const signature = secrets.map((secret) => new Webhook(secret).sign(eventId, at, body)).join(' ');
  return {
    'webhook-id': eventId,
    'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
    'webhook-signature': signature,
    'x-svc-signature': signature,
  };
}
