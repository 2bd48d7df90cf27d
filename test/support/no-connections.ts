import { Socket } from 'node:net';

/**
 * Unit tests run alone, with no database and no network: a socket a unit test opens (a pg client,
 * an HTTP request, a Redis connection) fails the test that opened it, named in the error.
 */
const REFUSED = Symbol.for('course-booking.unit-connections-refused');
const marked = Socket.prototype as unknown as Record<symbol, boolean>;
if (!marked[REFUSED]) {
  marked[REFUSED] = true;
  Socket.prototype.connect = function refuse(): never {
    throw new Error('A unit test opened a network connection: move it to test/integration');
  } as typeof Socket.prototype.connect;
}
