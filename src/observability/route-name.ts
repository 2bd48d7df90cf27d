import { trace } from '@opentelemetry/api';

/**
 * Names the route of a request the public app answers before any router layer (the list routes at
 * their exact paths) on its server span, as express's instrumentation names a route its router
 * matched: `http.route`, and the span's name `GET /api/public/v1/bookings`. Called where the
 * server span is the active one; without tracing there is no active span and nothing is done.
 */
export function nameServerRoute(method: string, route: string): void {
  const span = trace.getActiveSpan();
  if (!span) return;
  span.setAttribute('http.route', route);
  span.updateName(`${method} ${route}`);
}
