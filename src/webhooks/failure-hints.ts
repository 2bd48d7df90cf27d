import type { FailureClass } from './send-attempt.ts';

/**
 * What a person who made an attempt by hand (`webhook test`, `webhook redeliver`, the integrations
 * page) can do about its failure: the setting or the check that usually mends it. The classes are
 * the delivery log's (docs/webhooks.md); an HTTP status is the receiver's own answer and needs none.
 */
const HINTS: Partial<Record<FailureClass, string>> = {
  refused_target:
    'The URL leads to a private, loopback or otherwise non-public address, where the service does not deliver. For a receiver on this machine or network while testing, start the service with WEBHOOK_ALLOW_PRIVATE_TARGETS=true.',
  tls: "The receiver's certificate is not trusted. For a certificate of your own (self-signed), start the service with NODE_EXTRA_CA_CERTS=<its PEM file>.",
  connection_refused: 'Nothing accepted the connection at that address and port: is the receiver running and listening there?',
  dns: "The URL's host name does not resolve.",
  timeout: 'The receiver did not answer within 15 seconds.',
  redirect: 'The receiver answered with a redirect, which is not followed: register the URL it points to.',
  insecure_url: 'Deliveries go only to https:// URLs.',
};

export function failureHint(failure: FailureClass | null): string | null {
  return failure === null ? null : (HINTS[failure] ?? null);
}
