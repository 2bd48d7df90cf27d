import { register } from 'node:module';
import { readFileSync } from 'node:fs';
import { createAddHookMessageChannel } from 'import-in-the-middle';
import { NodeSDK } from '@opentelemetry/sdk-node';
import { defaultResource, resourceFromAttributes } from '@opentelemetry/resources';
import { BatchSpanProcessor, type SpanExporter } from '@opentelemetry/sdk-trace-base';
import { ExpressInstrumentation, ExpressLayerType } from '@opentelemetry/instrumentation-express';
import { GraphQLInstrumentation } from '@opentelemetry/instrumentation-graphql';
import { HttpInstrumentation } from '@opentelemetry/instrumentation-http';
import { IORedisInstrumentation } from '@opentelemetry/instrumentation-ioredis';
import { PgInstrumentation } from '@opentelemetry/instrumentation-pg';
import type { Config, OtlpProtocol } from '../config.ts';
import { createRedactor } from '../logger.ts';
import { packagePath } from '../package-root.ts';
import { RedactingSpanProcessor } from './redacting-span-processor.ts';

const VERSION = (JSON.parse(readFileSync(packagePath('package.json'), 'utf8')) as { version: string }).version;

/** A started tracing SDK: `shutdown` exports the spans still buffered. */
export interface Tracing {
  shutdown(): Promise<void>;
}

/** Each exporter reads its endpoint, headers, timeout and compression from the OTEL_* variables. */
async function exporterFor(protocol: OtlpProtocol): Promise<SpanExporter> {
  switch (protocol) {
    case 'http/json':
      return new (await import('@opentelemetry/exporter-trace-otlp-http')).OTLPTraceExporter();
    case 'grpc':
      return new (await import('@opentelemetry/exporter-trace-otlp-grpc')).OTLPTraceExporter();
    case 'http/protobuf':
      return new (await import('@opentelemetry/exporter-trace-otlp-proto')).OTLPTraceExporter();
  }
}

/**
 * The SDK as the OTEL_* variables configure it (sampler, batch processor, resource, service name),
 * traces only, with the instrumentations of the packages the service uses. Every span passes the
 * redacting processor before it is exported.
 */
export async function startTracingSdk(config: Config, protocol: OtlpProtocol): Promise<Tracing> {
  // ESM imports reach the instrumentations only through a module hook; the message channel limits
  // it to the modules the instrumentations name, so every other import is loaded untouched.
  const { registerOptions, waitForAllMessagesAcknowledged } = createAddHookMessageChannel();
  register('import-in-the-middle/hook.mjs', import.meta.url, registerOptions);
  const sdk = new NodeSDK({
    // OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES are detected on top of this default.
    resource: defaultResource().merge(resourceFromAttributes({ 'service.name': 'course-booking-public-api', 'service.version': VERSION })),
    spanProcessors: [
      new RedactingSpanProcessor(createRedactor([config.INTERNAL_API_TOKEN, config.METRICS_TOKEN])),
      // Reads OTEL_BSP_SCHEDULE_DELAY, OTEL_BSP_MAX_QUEUE_SIZE, OTEL_BSP_MAX_EXPORT_BATCH_SIZE, OTEL_BSP_EXPORT_TIMEOUT.
      new BatchSpanProcessor(await exporterFor(protocol)),
    ],
    // Traces only: without these the SDK would also export logs (and metrics, if asked) to the endpoint.
    logRecordProcessors: [],
    metricReaders: [],
    instrumentations: [
      new HttpInstrumentation(),
      // The route's handler only: the middleware layers are anonymous functions, a span each cost more
      // than they told, and the statements and Redis commands they run are spans of their own.
      new ExpressInstrumentation({ ignoreLayersType: [ExpressLayerType.MIDDLEWARE, ExpressLayerType.ROUTER] }),
      // Values (arguments, variables) are never recorded; resolvers of plain properties get no span.
      new GraphQLInstrumentation({ allowValues: false, ignoreTrivialResolveSpans: true, mergeItems: true }),
      // Statement text only, never its parameters; statements outside a traced request or attempt (the
      // webhook worker's claims, rate-limit clean-up) open no trace of their own.
      // Taking a pooled connection is no span of its own either.
      new PgInstrumentation({ enhancedDatabaseReporting: false, requireParentSpan: true, ignoreConnectSpans: true }),
      // The command's name only: its arguments hold rate-limit keys.
      new IORedisInstrumentation({ requireParentSpan: true, dbStatementSerializer: (command) => command }),
    ],
  });
  sdk.start();
  await waitForAllMessagesAcknowledged();
  return { shutdown: () => sdk.shutdown() };
}
