/** The tests' upper bound for waiting, shared with the platform stand-ins they drive (demo/wait.ts). */
export { WAIT_MS } from '../../demo/wait.ts';
