// Development only (the service running from its .ts sources): worker threads do not inherit a
// TypeScript loader from every parent (e.g. a test runner), so the worker registers tsx itself before
// loading its TypeScript body. The build starts the compiled worker.js instead (see pool.ts).
import { register } from 'tsx/esm/api';

register();
await import('./worker.ts');
