/**
 * Closes a bottleneck limiter that keeps its state in Redis, together with the connection it alone
 * uses, without a stray rejection and without a socket left behind, whatever state Redis is in.
 *
 * bottleneck 2.19.5's `disconnect` of a limiter on a connection it was handed unsubscribes the
 * limiter's two channels without awaiting either (IORedisConnection `__removeLimiter__`). When the
 * subscriber's socket is cut before Redis answers them (Redis just restarted, or hung), each is an
 * unhandled rejection, "Connection is closed.". Closing the connection first marks it terminated,
 * so the limiter's disconnect then only stops its heartbeat. Each step talks to Redis and could wait
 * forever on a hung one: each gets a bounded time, and both sockets are cut when the goodbye is not
 * answered.
 */
import type Bottleneck from 'bottleneck';
import { bounded } from './timing.ts';

/** An ioredis client as far as closing reads it. */
interface EndingClient {
  status: string;
  once(event: 'end', listener: () => void): unknown;
}

/** The two clients bottleneck 2.19.5's IORedisConnection holds: the one it was handed and its subscriber. */
interface ConnectionClients {
  client: EndingClient;
  subscriber: EndingClient;
}

/** Stops `limiter` (its waiting jobs dropped) and, when it keeps its state in Redis, closes `connection` as above. */
export async function closeLimiter(
  limiter: Bottleneck,
  /** The Redis connection the limiter alone uses; undefined for a limiter in this process only. */
  connection: Bottleneck.IORedisConnection | undefined,
  /** False when Redis is known to be unreachable: its sockets are cut at once instead of said goodbye to. */
  healthy: boolean,
): Promise<void> {
  await bounded(limiter.stop({ dropWaitingJobs: true }), 2_000);
  if (!connection) return;
  const flushed = healthy && (await bounded(connection.disconnect(true), 2_000));
  if (!flushed) await bounded(connection.disconnect(false), 1_000);
  await bounded(limiter.disconnect(false), 1_000);
  // Redis's answer to the goodbye comes before the sockets close: a caller that exits or checks for
  // open handles once close() has resolved would find them still open.
  const { client, subscriber } = connection as unknown as Partial<ConnectionClients>;
  const open = [client, subscriber].filter((c): c is EndingClient => c !== undefined && c.status !== 'end');
  await bounded(Promise.all(open.map((c) => new Promise<void>((resolve) => c.once('end', () => resolve())))), 1_000);
}
