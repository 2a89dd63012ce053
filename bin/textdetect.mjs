#!/usr/bin/env node
// The package runs its TypeScript directly (no build step), so `npx textdetect` works right after `npm ci`.
import { register } from 'tsx/esm/api';

register();
await import('../src/cli/main.ts');
