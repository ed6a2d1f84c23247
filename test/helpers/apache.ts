import { spawn } from 'node:child_process';
import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { waitFor } from './redisServer.js';

/** Debian's Apache (scripts/install-relying-parties.sh) and where its modules are. */
export const APACHE = '/usr/sbin/apache2';
const MODULES = '/usr/lib/apache2/modules';

/**
 * Apache on 127.0.0.1:`port`, in a folder of its own, with the mod_auth_openidc recipe (`recipe`, a file
 * of examples/) included as written and `env` in its environment for the recipe's ${VAR}s; `cgi` is
 * served at `cgiPath`. Apache may not serve as root: run as root (CI), its children are www-data.
 * `caFile`: the CA mod_auth_openidc trusts for its calls to the service (OIDCCABundlePath).
 */
export async function startApache(o: {
  port: number;
  recipe: string;
  cgi: string;
  cgiPath: string;
  env: Record<string, string>;
  caFile: string;
}): Promise<{ log(): string; stop(): Promise<void> }> {
  const dir = mkdtempSync(join(tmpdir(), 'vc-apache-'));
  chmodSync(dir, 0o755); // the children (www-data) read the CA and run the CGI
  const ca = join(dir, 'ca.pem');
  writeFileSync(ca, readFileSync(o.caFile));
  const asRoot = process.getuid?.() === 0;
  writeFileSync(
    join(dir, 'httpd.conf'),
    [
      `ServerRoot ${dir}`,
      'ServerName localhost',
      `Listen 127.0.0.1:${o.port}`,
      `PidFile ${dir}/httpd.pid`,
      `DefaultRuntimeDir ${dir}`,
      `ErrorLog ${dir}/error.log`,
      'LogLevel warn auth_openidc:info',
      ...(asRoot ? ['User www-data', 'Group www-data'] : []),
      ...['mpm_prefork', 'authz_core', 'authz_user', 'authn_core', 'alias', 'cgi', 'env'].map(
        (m) => `LoadModule ${m}_module ${MODULES}/mod_${m}.so`,
      ),
      `LoadModule auth_openidc_module ${MODULES}/mod_auth_openidc.so`,
      'StartServers 2',
      'MinSpareServers 1',
      'MaxSpareServers 2',
      `OIDCCABundlePath ${ca}`,
      `Include ${resolve(o.recipe)}`,
      `ScriptAlias ${o.cgiPath} ${resolve(o.cgi)}`,
    ].join('\n') + '\n',
  );
  let output = '';
  const child = spawn(APACHE, ['-f', join(dir, 'httpd.conf'), '-DFOREGROUND'], {
    env: { ...process.env, ...o.env },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true, // a group of its own: prefork's shutdown signals its whole process group
  });
  child.stdout!.on('data', (d) => (output += String(d)));
  child.stderr!.on('data', (d) => (output += String(d)));
  const log = () => {
    let errors = '';
    try {
      errors = readFileSync(join(dir, 'error.log'), 'utf8');
    } catch {
      /* not yet written */
    }
    return `${output}${errors}`;
  };
  await waitFor(
    `Apache on 127.0.0.1:${o.port}`,
    async () => {
      if (child.exitCode !== null) return true; // waitFor takes a throw for "not yet"
      return new Promise<boolean>((ok) => {
        const socket = connect(o.port, '127.0.0.1', () => ok(socket.end() && true)).on('error', () => ok(false));
      });
    },
    30_000,
    100,
  ).catch((err: Error) => {
    child.kill();
    throw new Error(`${err.message}\n${log()}`);
  });
  if (child.exitCode !== null) throw new Error(`Apache exited (${child.exitCode}): ${log()}`);
  return {
    log,
    stop: () =>
      new Promise<void>((done) => {
        const cleaned = () => done(rmSync(dir, { recursive: true, force: true }));
        if (child.exitCode !== null) return cleaned();
        child.once('exit', cleaned);
        child.kill('SIGTERM');
      }),
  };
}
