/** Body of a scoring worker thread: loads one engine, then scores the texts the pool sends it. */
import { parentPort, workerData } from 'node:worker_threads';
import type { DetectOptions } from '../detector/types.ts';

const port = parentPort;
if (!port) throw new Error('detect-worker must run in a worker thread');
const { modelPath } = workerData as { modelPath?: string };

try {
  const { createDetector } = await import('../detector/index.ts');
  const detector = await createDetector(modelPath === undefined ? {} : { model: modelPath });
  port.on('message', (message: { id: number; text: string; options: DetectOptions }) => {
    try {
      port.postMessage({ id: message.id, result: detector.detect(message.text, message.options) });
    } catch (err) {
      const e = err as Error & { detected?: string };
      port.postMessage({ id: message.id, error: { name: e.name, message: e.message, detected: e.detected } });
    }
  });
  port.postMessage({ ready: detector.model });
} catch (err) {
  port.postMessage({ error: (err as Error).message });
}
