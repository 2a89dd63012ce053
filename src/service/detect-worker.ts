/** Body of a scoring worker thread: loads one engine, then scores the texts and authors' messages the pool sends it. */
import { parentPort, workerData } from 'node:worker_threads';
import { lowerThreadPriority } from '../thread-priority.ts';
import type { WorkerJob } from './engine.ts';

const port = parentPort;
if (!port) throw new Error('detect-worker must run in a worker thread');
const { modelPath, nice } = workerData as { modelPath?: string; nice?: number };
if (nice) lowerThreadPriority(nice);

try {
  const { createDetector } = await import('../detector/index.ts');
  const detector = await createDetector(modelPath === undefined ? {} : { model: modelPath });
  port.on('message', (message: WorkerJob) => {
    try {
      const result =
        message.kind === 'author'
          ? detector.detectAuthor(message.messages, message.options)
          : message.kind === 'window'
            ? detector.detectWindow(message.text, message.plan, message.options)
            : detector.start(message.text, message.options);
      port.postMessage({ id: message.id, result });
    } catch (err) {
      const e = err as Error & { detected?: string };
      port.postMessage({ id: message.id, error: { name: e.name, message: e.message, detected: e.detected } });
    }
  });
  port.postMessage({ ready: detector.model });
} catch (err) {
  port.postMessage({ error: (err as Error).message });
}
