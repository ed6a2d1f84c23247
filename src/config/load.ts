import { readFile } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import { parse as parseYaml } from 'yaml';
import { configSchema, type Config } from './schema.js';

export class ConfigError extends Error {
  readonly problems: string[];
  constructor(file: string, problems: string[]) {
    super(`${file}: invalid configuration\n${problems.map((p) => `  - ${p}`).join('\n')}`);
    this.name = 'ConfigError';
    this.problems = problems;
  }
}

/** `${VAR}` and `${VAR:-default}` from the environment (D15); a missing variable is a problem, not an empty string. */
export function substituteEnv(text: string, env: NodeJS.ProcessEnv, problems: string[]): string {
  return text.replace(/\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}/g, (_m, name: string, fallback?: string) => {
    const value = env[name];
    if (value !== undefined && value !== '') return value;
    if (fallback !== undefined) return fallback;
    problems.push(`environment variable ${name} is not set`);
    return '';
  });
}

function formatPath(path: readonly PropertyKey[]): string {
  return path.reduce<string>((acc, seg) => (typeof seg === 'number' ? `${acc}[${seg}]` : acc ? `${acc}.${String(seg)}` : String(seg)), '');
}

/** Validates a parsed document; every problem is reported with its path (D15). */
export function validateConfig(doc: unknown, file = 'config'): Config {
  const result = configSchema.safeParse(doc);
  if (!result.success) {
    throw new ConfigError(file, result.error.issues.map((i) => `${formatPath(i.path) || '(root)'}: ${i.message}`));
  }
  return result.data;
}

export interface LoadedConfig {
  config: Config;
  file: string;
  /** directory relative paths in the file (keys) resolve against */
  baseDir: string;
}

export async function loadConfig(file: string, env: NodeJS.ProcessEnv = process.env): Promise<LoadedConfig> {
  const path = resolve(file);
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (err) {
    throw new ConfigError(path, [`cannot read file: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`]);
  }
  const problems: string[] = [];
  const substituted = substituteEnv(text, env, problems);
  let doc: unknown;
  try {
    doc = parseYaml(substituted); // YAML is a superset of JSON: one parser serves both
  } catch (err) {
    throw new ConfigError(path, [...problems, `not valid YAML/JSON: ${(err as Error).message.split('\n')[0]}`]);
  }
  if (doc && typeof doc === 'object') {
    const d = doc as Record<string, unknown>;
    if (env.PORT) d.port = Number(env.PORT);
    if (env.BASE_URL) d.baseUrl = env.BASE_URL;
  }
  let config: Config | undefined;
  try {
    config = validateConfig(doc, path);
  } catch (err) {
    if (err instanceof ConfigError) throw new ConfigError(path, [...problems, ...err.problems]);
    throw err;
  }
  if (problems.length) throw new ConfigError(path, problems);
  config.baseUrl = config.baseUrl.replace(/\/+$/, '');
  return { config, file: path, baseDir: dirname(path) };
}
