// Worker threads do not inherit a TypeScript loader from every parent (e.g. a test runner), so the
// worker registers tsx itself before loading its TypeScript body.
import { register } from 'tsx/esm/api';

register();
await import('./detect-worker.ts');
