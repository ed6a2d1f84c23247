#!/usr/bin/env node
import { relative } from 'node:path';
import { parseArgs } from 'node:util';
import { loadConfig, ConfigError } from './config/load.js';
import { createService, type Service } from './app.js';
import { listen, type RunningServer } from './server.js';
import { writeJsonSchema } from './config/jsonSchema.js';
import { webhooksCommand } from './webhooks/cli.js';
import { adminCommand } from './admin/cli.js';
import { keysCommand } from './keys/cli.js';
import { startTracingFromEnv } from './telemetry/tracing.js';
import { isLoopbackHost } from './rules/loopback.js';

const USAGE = `Usage:
  npm start [-- --config FILE]         start the service (default config/demo.yaml, or $CONFIG)
  npm run check-config -- --config FILE  validate a config file and exit
  npm run config-schema                write config/config.schema.json
  npm run webhooks -- list [--failed] | resend ID [--config FILE]
                                       show or resend webhook deliveries (Redis store; --help for more)
  npm run admin -- revoke|suspend|reinstate|status SERIAL-NUMBER [--config FILE]
                                       change or show an issued credential's status (Redis store)
  npm run keys -- rotate idToken|credential|cookies | list | generate SET [--config FILE]
                                       rotate a key set without a gap, list the keys, or make a missing
                                       key file (--help for more)
Environment: CONFIG (config file), PORT and BASE_URL (override the file).`;

async function main(argv: string[]): Promise<number> {
  const [command = 'serve', ...rest] = argv[0]?.startsWith('-') ? ['serve', ...argv] : argv;
  // its own options (--failed) and subcommands, which the strict parse below would refuse
  if (command === 'webhooks') return webhooksCommand(rest, process.env.CONFIG ?? 'config/demo.yaml');
  if (command === 'admin') return adminCommand(rest, process.env.CONFIG ?? 'config/demo.yaml');
  if (command === 'keys') return keysCommand(rest, process.env.CONFIG ?? 'config/demo.yaml');
  const { values } = parseArgs({
    args: rest,
    options: { config: { type: 'string', short: 'c' }, help: { type: 'boolean', short: 'h' } },
    allowPositionals: true,
  });
  if (values.help) {
    console.log(USAGE);
    return 0;
  }
  const file = values.config ?? process.env.CONFIG ?? 'config/demo.yaml';
  switch (command) {
    case 'serve':
      return serve(file);
    case 'check-config': {
      const { config } = await loadConfig(file);
      console.log(
        `${file}: valid (${config.clients.length} clients, ${config.credentialTypes.length} credential types)`,
      );
      return 0;
    }
    case 'config-schema':
      console.log(`wrote ${await writeJsonSchema('config/config.schema.json')}`);
      return 0;
    default:
      console.error(`unknown command ${command}\n${USAGE}`);
      return 2;
  }
}

async function serve(file: string): Promise<number> {
  const loaded = await loadConfig(file);
  // only when the standard OTEL_* variables ask for traces; before the service, whose store and requests it wraps
  const tracing = startTracingFromEnv();
  const service = await createService(loaded);
  let running: Awaited<ReturnType<typeof listen>>;
  try {
    running = await listen(service);
  } catch (err) {
    await service.close();
    await tracing?.shutdown();
    if (!explainListenError(err, service)) throw err;
    return 1;
  }
  const log = service.logger;
  logStartup(service, tracing);
  printAddresses(service, running);
  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    log.info({ signal }, 'shutting down: finishing requests in flight');
    await running.stop(10_000);
    // the spans of the last requests, exported before the process ends
    await tracing
      ?.shutdown()
      .catch((err: Error) => log.warn({ err: err.message }, 'traces: the last spans could not be exported'));
    process.exit(0);
  };
  process.on('SIGTERM', () => void stop('SIGTERM'));
  process.on('SIGINT', () => void stop('SIGINT'));
  return -1;
}

/** A port in use or not allowed: said in a sentence with what to change (true); any other error is not explained here. */
function explainListenError(err: unknown, service: Service): boolean {
  const e = err as NodeJS.ErrnoException & { port?: number; address?: string };
  if (e.code !== 'EADDRINUSE' && e.code !== 'EACCES') return false;
  const metrics = e.port !== undefined && e.port === service.config.metrics.port && e.port !== service.config.port;
  const what = metrics ? `metrics.port ${e.port}` : `port ${e.port ?? service.config.port}`;
  const change = metrics
    ? 'set another metrics.port in the config'
    : `start on another one: PORT=${(e.port ?? service.config.port) + 1} npm start (or port: in the config)`;
  console.error(
    e.code === 'EADDRINUSE'
      ? `error: ${what} on ${e.address ?? service.config.host} is already in use (another copy of this service, or another program). Stop that one, or ${change}.`
      : `error: not allowed to listen on ${what} (ports below 1024 need privileges). ${change[0].toUpperCase()}${change.slice(1)}.`,
  );
  return true;
}

/** Where the keys and certificates came from (D20, HAIP 1.0 §6.1.1), and what an operator must know; never a key's value. */
function logStartup(service: Service, tracing: ReturnType<typeof startTracingFromEnv>): void {
  const log = service.logger;
  // once per key set, where it came from (D20); never a key's value
  const keyMessages = {
    file: 'keys: loaded from the key file',
    'generated-file': 'keys: no key file: generated a new key file (keep it secret; it is git-ignored)',
    'generated-store':
      'keys: no key file: generated a new key set into the store, where every instance on this store loads it (keep the store secret)',
    store: 'keys: no key file: loaded the key set from the store (another instance, or an earlier start, generated it)',
  } as const;
  for (const o of service.keyOrigins)
    log.info({ keySet: o.set, file: o.file, ...(o.storeKey ? { storeKey: o.storeKey } : {}) }, keyMessages[o.origin]);
  const verifier = service.verifierOrigin;
  log.info(
    {
      clientId: service.verifier.clientId,
      origin: verifier.origin,
      ...(verifier.caFile ? { trustCa: verifier.caFile } : {}),
    },
    'verifier: the client_id wallets see',
  );
  for (const warning of verifier.warnings) log.warn(warning);
  // ETSI TS 119 475: whom wallets are told each relying party is, and until when
  for (const [clientId, registrations] of service.registrations.clients)
    for (const r of registrations)
      log.info(
        {
          clientId,
          registered: r.subject,
          ...(r.name ? { name: r.name } : {}),
          registrar: r.registrar,
          ...(r.expiresAt ? { expires: new Date(r.expiresAt * 1000).toISOString() } : {}),
        },
        'verifier: requests for this client carry its registration certificate (verifier_info)',
      );
  if (tracing) log.info(tracing.description);
  // HAIP 1.0 §6.1.1: the certificate our credentials and status lists carry in x5c
  const issuer = service.issuerOrigin;
  const issuerMessages = {
    file: 'issuer: credentials are signed with issuer.key under issuer.certificateChain',
    'generated-file':
      'issuer: no certificate files: made a local issuer CA (development) that certifies each credential key',
    'generated-store':
      'issuer: no certificate files: made a local issuer CA (development) in the store; it certifies each credential key',
    'local-file': 'issuer: no certificate files: the local issuer CA (development) certifies each credential key',
    store: 'issuer: no certificate files: the local issuer CA (development) in the store certifies each credential key',
    none: 'issuer: no certificate: credentials carry only a kid',
  } as const;
  log.info(
    { origin: issuer.origin, ...(issuer.caFile ? { trustCa: issuer.caFile } : {}) },
    issuerMessages[issuer.origin],
  );
  for (const warning of issuer.warnings) log.warn(warning);
  // ARF Annex 2 VCR_01: the operator chose mdocs that outlive a day without a status
  for (const warning of service.walletIssuer.warnings) log.warn(warning);
  if (service.store.kind === 'memory')
    log.warn('store: memory (embedded, one process): all state is lost on restart; configure Redis for production');
  const demoWarning = demoExposure(service.config);
  if (demoWarning) log.warn(demoWarning);
}

/** The demo (published secrets, a PID issuer that signs what it is asked) where other machines reach it. */
function demoExposure({ demo, demoOnPublicUrl, baseUrl, host }: Service['config']): string | undefined {
  if (!demo) return undefined;
  const risk = "the demo's secrets are published and its PID issuer signs whatever a visitor asks; never in production";
  if (demoOnPublicUrl) return `demo: served at ${baseUrl} (demoOnPublicUrl): ${risk}`;
  if (isLoopbackHost(host) || host === '::1') return undefined;
  return `demo: listening on ${host}, so other machines reach it too: ${risk}`;
}

/** The addresses: a banner for a person at a terminal, one JSON log line for a log collector. */
function printAddresses(service: Service, running: RunningServer): void {
  const { config } = service;
  const log = service.logger;
  const caFile = service.verifierOrigin.caFile && relative(process.cwd(), service.verifierOrigin.caFile);
  const issuerCaFile = service.issuerOrigin.caFile && relative(process.cwd(), service.issuerOrigin.caFile);
  // the banner is for a person at a terminal; a log collector gets the same addresses as one JSON line
  const links = {
    url: running.url,
    baseUrl: config.baseUrl,
    discovery: [
      `${config.baseUrl}/v2.0/.well-known/openid-configuration`,
      `${config.baseUrl}/oidc/.well-known/openid-configuration`,
    ],
    ...(service.metrics.url ? { metrics: service.metrics.url } : {}),
    ...(config.demo ? { demo: `${config.baseUrl}/demo` } : {}),
  };
  if (!process.stdout.isTTY) log.info(links, 'listening');
  if (process.stdout.isTTY)
    console.log(`
  VC OpenID Provider is running (listening on ${running.url}, base URL ${config.baseUrl})

  Version 2 discovery:  ${config.baseUrl}/v2.0/.well-known/openid-configuration
  Version 1 discovery:  ${config.baseUrl}/oidc/.well-known/openid-configuration
  Wallet issuer:        ${config.baseUrl}/.well-known/openid-credential-issuer/${config.walletPath}
  Health:               ${config.baseUrl}/healthz  ${config.baseUrl}/readyz
${service.metrics.url ? `  Metrics:              ${service.metrics.url}  (Prometheus; its own listener, not the public port)\n` : ''}${
      caFile
        ? `  Verifier:             signs its requests under a local CA made for development;
                        a wallet must be told to trust ${caFile}
                        (dev wallet: npm run wallet -- present '<openid4vp link>' --trust ${caFile})
`
        : ''
    }${
      issuerCaFile
        ? `  Issuer:               signs credentials under a local issuer CA made for development;
                        a wallet must be told to trust ${issuerCaFile}
`
        : ''
    }${config.demo ? `\n  Try an issuance in your browser:  ${config.baseUrl}/demo\n` : ''}`);
}

main(process.argv.slice(2)).then(
  (code) => {
    if (code >= 0) process.exit(code);
  },
  (err) => {
    if (err instanceof ConfigError) console.error(err.message);
    else console.error(`error: ${(err as Error).message}`);
    process.exit(1);
  },
);
