import { tracesProtocol, type Config } from '../config.ts';
import type { Tracing } from './tracing-sdk.ts';

export type { Tracing };

/**
 * Starts OpenTelemetry tracing when an OTLP endpoint is configured (docs/tracing.md). It must run
 * before the modules it instruments are imported, so the entry points import the rest of the
 * service after it. Without an endpoint it returns at once: the SDK, its instrumentations and the
 * module hook are never loaded, and the spans the service opens through `@opentelemetry/api` are
 * the API's no-op spans.
 */
export async function startTracing(config: Config): Promise<Tracing | null> {
  const protocol = tracesProtocol(config);
  if (protocol === null) return null;
  const { startTracingSdk } = await import('./tracing-sdk.ts');
  return startTracingSdk(config, protocol);
}
