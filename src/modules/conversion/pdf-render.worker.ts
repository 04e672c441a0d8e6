/**
 * Entry point of a render worker process (forked by render-worker-pool.ts). Loading pdf.js and sharp costs ~320 ms
 * per thread, half of it compiling pdf.js; Node's on-disk compile cache (in the
 * OS temp dir, keyed by file content) halves that for every job after the
 * first, which matters for the time to first page. It must be enabled before
 * those modules are imported, hence this two-step start.
 */
import { enableCompileCache } from 'node:module';

enableCompileCache();
await import('./pdf-page-renderer.ts');
