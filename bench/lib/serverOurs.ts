/**
 * Child process: our service (createService + listen, as `main.ts serve` runs them) from the compiled
 * dist/ (or src/ through tsx: BENCH_OURS_FROM=src), on the configuration of bench/lib/config.ts. Driven
 * over IPC by bench/run.ts.
 */
import { installSignCounter, serveIpc } from './serverCommon.js';
import { oursConfig, type ServerSpec } from './config.js';

installSignCounter();

const spec = JSON.parse(process.env.BENCH_SERVER_SPEC ?? '{}') as ServerSpec;
// the compiled JavaScript (dist/, built by bench/run.ts), as production runs it; BENCH_OURS_FROM=src: the
// TypeScript through tsx, as `npm start` runs it (tsx names every closure as it is created: a small cost per call)
const root = process.env.BENCH_OURS_FROM === 'src' ? '../../src' : '../../dist';
const { validateConfig } = (await import(`${root}/config/load.js`)) as typeof import('../../src/config/load.js');
const { createService } = (await import(`${root}/app.js`)) as typeof import('../../src/app.js');
const { listen } = (await import(`${root}/server.js`)) as typeof import('../../src/server.js');

const config = validateConfig(oursConfig(spec), 'bench');
const service = await createService({ config, file: 'bench', baseDir: process.cwd() });
const running = await listen(service, spec.port, '127.0.0.1');

serveIpc({
  stop: () => running.stop(2_000),
  storeSize: () => (service.store as { size?: number }).size,
});
process.send?.({ type: 'ready', url: running.url, pid: process.pid });
