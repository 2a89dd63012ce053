// Development only (the service running from its .ts sources): reader processes start without the
// parent's loader flags (e.g. a test runner's), so the reader registers tsx itself before
// loading its TypeScript body. The build starts the compiled worker.js instead (see pool.ts).
import { register } from 'tsx/esm/api';

register();
await import('./worker.ts');
