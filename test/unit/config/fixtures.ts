import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ConfigError } from '../../../src/config/load.js';

/** A minimal valid configuration document (D15): one credential type, one client. */
export function minimalDoc(): Record<string, any> {
  return {
    baseUrl: 'https://vc.example.com',
    credentialTypes: [{ name: 'EmployeeBadge', attributes: { FirstName: { type: 'string' } } }],
    clients: [
      {
        clientId: 'hr-portal',
        clientSecret: 'hr-portal-secret-0123456789',
        redirectUris: ['https://hr.example.com/callback'],
        scopes: ['issue.EmployeeBadge', 'EmployeeBadge'],
      },
    ],
  };
}

/** A temp directory for config files, removed by `cleanup`. */
export async function tempDir(): Promise<{
  dir: string;
  write: (name: string, text: string) => Promise<string>;
  cleanup: () => Promise<void>;
}> {
  const dir = await mkdtemp(join(tmpdir(), 'vc-config-test-'));
  return {
    dir,
    write: async (name, text) => {
      const file = join(dir, name);
      await writeFile(file, text);
      return file;
    },
    cleanup: () => rm(dir, { recursive: true, force: true }),
  };
}

/** Runs `fn`, expects a ConfigError and returns its problems. */
export async function problemsOf(fn: () => unknown): Promise<string[]> {
  let caught: unknown;
  try {
    await fn();
  } catch (e) {
    caught = e;
  }
  if (!(caught instanceof ConfigError))
    throw new Error(`expected a ConfigError, got ${caught === undefined ? 'no error' : String(caught)}`);
  return caught.problems;
}
