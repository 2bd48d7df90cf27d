import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import protobuf from 'protobufjs';

/** A span as received, in either encoding: ids in hex, attribute values as plain values. */
export interface ReceivedSpan {
  traceId: string;
  spanId: string;
  /** Empty for a root span. */
  parentSpanId: string;
  name: string;
  /** OTLP's SpanKind: 1 internal, 2 server, 3 client, 4 producer, 5 consumer. */
  kind: number;
  scope: string;
  attributes: Record<string, unknown>;
  events: Array<{ name: string; attributes: Record<string, unknown> }>;
  status: { code: number; message: string };
  service: string;
}

/**
 * The messages of an OTLP/HTTP traces export request, with the field numbers of
 * opentelemetry-proto's collector/trace/v1, trace/v1, resource/v1 and common/v1 (only what a test reads).
 */
const OTLP_TRACES_PROTO = `
syntax = "proto3";
package otlp;
message ExportTraceServiceRequest { repeated ResourceSpans resource_spans = 1; }
message ResourceSpans { Resource resource = 1; repeated ScopeSpans scope_spans = 2; }
message Resource { repeated KeyValue attributes = 1; }
message ScopeSpans { InstrumentationScope scope = 1; repeated Span spans = 2; }
message InstrumentationScope { string name = 1; string version = 2; }
message Span {
  bytes trace_id = 1; bytes span_id = 2; bytes parent_span_id = 4; string name = 5; int32 kind = 6;
  repeated KeyValue attributes = 9; repeated Event events = 11; Status status = 15;
}
message Event { string name = 2; repeated KeyValue attributes = 3; }
message Status { string message = 2; int32 code = 3; }
message KeyValue { string key = 1; AnyValue value = 2; }
message AnyValue {
  oneof value { string string_value = 1; bool bool_value = 2; int64 int_value = 3; double double_value = 4; ArrayValue array_value = 5; bytes bytes_value = 7; }
}
message ArrayValue { repeated AnyValue values = 1; }
`;

const ExportTraceServiceRequest = protobuf.parse(OTLP_TRACES_PROTO, { keepCase: false }).root.lookupType('otlp.ExportTraceServiceRequest');

/** The JSON mapping of OTLP (what http/json sends and protobuf's decoded form converts to). */
interface JsonAnyValue {
  stringValue?: string;
  boolValue?: boolean;
  intValue?: string | number;
  doubleValue?: number;
  arrayValue?: { values?: JsonAnyValue[] };
  bytesValue?: string;
}
type JsonAttributes = Array<{ key: string; value?: JsonAnyValue }> | undefined;
interface JsonRequest {
  resourceSpans?: Array<{
    resource?: { attributes?: JsonAttributes };
    scopeSpans?: Array<{
      scope?: { name?: string };
      spans?: Array<{
        traceId?: string;
        spanId?: string;
        parentSpanId?: string;
        name?: string;
        kind?: number;
        attributes?: JsonAttributes;
        events?: Array<{ name?: string; attributes?: JsonAttributes }>;
        status?: { code?: number; message?: string };
      }>;
    }>;
  }>;
}

function valueOf(value: JsonAnyValue | undefined): unknown {
  if (!value) return null;
  if (value.stringValue !== undefined) return value.stringValue;
  if (value.boolValue !== undefined) return value.boolValue;
  if (value.intValue !== undefined) return Number(value.intValue);
  if (value.doubleValue !== undefined) return value.doubleValue;
  if (value.arrayValue !== undefined) return (value.arrayValue.values ?? []).map(valueOf);
  return value.bytesValue ?? null;
}

const attributesOf = (attributes: JsonAttributes) => Object.fromEntries((attributes ?? []).map(({ key, value }) => [key, valueOf(value)]));

/** OTLP/JSON writes ids as hex; protobufjs's JSON form writes bytes as base64. */
const hexId = (id: string | undefined, encoding: 'hex' | 'base64') => (encoding === 'hex' ? (id ?? '') : Buffer.from(id ?? '', 'base64').toString('hex'));

function spansOf(request: JsonRequest, idEncoding: 'hex' | 'base64'): ReceivedSpan[] {
  return (request.resourceSpans ?? []).flatMap((resourceSpans) => {
    const service = String(attributesOf(resourceSpans.resource?.attributes)['service.name'] ?? '');
    return (resourceSpans.scopeSpans ?? []).flatMap((scopeSpans) =>
      (scopeSpans.spans ?? []).map((span) => ({
        traceId: hexId(span.traceId, idEncoding),
        spanId: hexId(span.spanId, idEncoding),
        parentSpanId: hexId(span.parentSpanId, idEncoding),
        name: span.name ?? '',
        kind: span.kind ?? 0,
        scope: scopeSpans.scope?.name ?? '',
        attributes: attributesOf(span.attributes),
        events: (span.events ?? []).map((event) => ({ name: event.name ?? '', attributes: attributesOf(event.attributes) })),
        status: { code: span.status?.code ?? 0, message: span.status?.message ?? '' },
        service,
      })),
    );
  });
}

export interface OtlpReceiver {
  /** The endpoint to give as OTEL_EXPORTER_OTLP_ENDPOINT. */
  url: string;
  spans: ReceivedSpan[];
  /** The content types of the export requests received. */
  contentTypes: string[];
  /** Waits until `predicate` holds for the spans received so far. */
  waitFor(predicate: (spans: ReceivedSpan[]) => boolean, timeoutMs?: number): Promise<ReceivedSpan[]>;
  close(): Promise<void>;
}

/** An OTLP/HTTP traces endpoint (`/v1/traces`) that decodes http/json and http/protobuf exports. */
export async function startOtlpReceiver(): Promise<OtlpReceiver> {
  const spans: ReceivedSpan[] = [];
  const contentTypes: string[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      const type = req.headers['content-type'] ?? '';
      contentTypes.push(type);
      if (req.url !== '/v1/traces') {
        res.writeHead(404).end();
        return;
      }
      if (type.startsWith('application/x-protobuf')) {
        const decoded = ExportTraceServiceRequest.toObject(ExportTraceServiceRequest.decode(body), { longs: String, bytes: String, enums: Number, oneofs: false });
        spans.push(...spansOf(decoded as JsonRequest, 'base64'));
        res.writeHead(200, { 'content-type': 'application/x-protobuf' }).end();
      } else {
        spans.push(...spansOf(JSON.parse(body.toString('utf8')) as JsonRequest, 'hex'));
        res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    spans,
    contentTypes,
    async waitFor(predicate, timeoutMs = 15_000) {
      const deadline = Date.now() + timeoutMs;
      while (!predicate(spans)) {
        if (Date.now() > deadline) throw new Error(`the spans expected did not arrive; received:\n${spans.map((span) => `${span.traceId} ${span.name}`).join('\n')}`);
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      return spans;
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
