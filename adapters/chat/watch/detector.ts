/**
 * How watching reaches the detection service: through the bots' one queue (adapters/chat/queue.ts),
 * as background calls that start only after every waiting interactive check and leave a quarter of
 * the key's budget to them.
 */
import {
  authorRequestCost,
  detectRequestCost,
  type DetectAuthorRequest,
  type DetectAuthorResponse,
  type DetectRequest,
  type DetectResponse,
} from '../../../src/contract.ts';
import type { DetectionBackend } from '../backend.ts';

type CallOptions = { signal?: AbortSignal | undefined; requestId?: string | undefined };

export interface WatchDetector {
  detect(request: DetectRequest, options?: CallOptions): Promise<DetectResponse>;
  /** The author-level score of one member's recent messages (POST /v1/detect/author). */
  detectAuthor(request: DetectAuthorRequest, options?: CallOptions): Promise<DetectAuthorResponse>;
  /** True when a watched message may start now without delaying a moderator's check. */
  roomForBackground(): Promise<boolean>;
}

function clientOptions(options: CallOptions): CallOptions {
  return { ...(options.signal ? { signal: options.signal } : {}), ...(options.requestId ? { requestId: options.requestId } : {}) };
}

export function watchDetectorFor(backend: Pick<DetectionBackend, 'queue' | 'client'>): WatchDetector {
  return {
    async detect(request, options = {}) {
      const { value } = await backend.queue.run(() => backend.client.detect(request, clientOptions(options)), {
        background: true,
        weight: detectRequestCost(request.text),
        signal: options.signal,
      });
      return value;
    },
    async detectAuthor(request, options = {}) {
      // Weighted as the service charges it, so the queue's pacing matches the key's budget.
      const { value } = await backend.queue.run(() => backend.client.detectAuthor(request, clientOptions(options)), {
        background: true,
        weight: authorRequestCost(request.messages),
        signal: options.signal,
      });
      return value;
    },
    roomForBackground: () => backend.queue.roomForBackground(),
  };
}
