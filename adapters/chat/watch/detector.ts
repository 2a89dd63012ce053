/**
 * How watching reaches the detection service: through the bots' one queue (adapters/chat/queue.ts),
 * as background calls that start only after every waiting interactive check and leave a quarter of
 * the key's budget to them.
 */
import type { DetectRequest, DetectResponse } from '../../../src/contract.ts';
import type { DetectionBackend } from '../backend.ts';

export interface WatchDetector {
  detect(request: DetectRequest, options?: { signal?: AbortSignal | undefined; requestId?: string | undefined }): Promise<DetectResponse>;
  /** True when a watched message may start now without delaying a moderator's check. */
  roomForBackground(): Promise<boolean>;
}

export function watchDetectorFor(backend: Pick<DetectionBackend, 'queue' | 'client'>): WatchDetector {
  return {
    async detect(request, options = {}) {
      const { value } = await backend.queue.run(
        () =>
          backend.client.detect(request, {
            ...(options.signal ? { signal: options.signal } : {}),
            ...(options.requestId ? { requestId: options.requestId } : {}),
          }),
        { background: true, signal: options.signal },
      );
      return value;
    },
    roomForBackground: () => backend.queue.roomForBackground(),
  };
}
