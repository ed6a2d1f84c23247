/**
 * Child process: our service, as `npm start` runs it (createService + listen from src/), on the
 * configuration of bench/lib/config.ts. Driven over IPC by bench/run.ts.
 */
import { installSignCounter, serveIpc } from './serverCommon.js';
import { oursConfig, type ServerSpec } from './config.js';

installSignCounter();

const spec = JSON.parse(process.env.BENCH_SERVER_SPEC ?? '{}') as ServerSpec;
const { validateConfig } = await import('../../src/config/load.js');
const { createService } = await import('../../src/app.js');
const { listen } = await import('../../src/server.js');

const config = validateConfig(oursConfig(spec), 'bench');
const service = await createService({ config, file: 'bench', baseDir: process.cwd() });
const running = await listen(service, spec.port, '127.0.0.1');

serveIpc({
  stop: () => running.stop(2_000),
  storeSize: () => (service.store as { size?: number }).size,
});
process.send?.({ type: 'ready', url: running.url, pid: process.pid });
