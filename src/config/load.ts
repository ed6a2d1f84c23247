import { readFile } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import { parseDocument, visit } from 'yaml';
import type { z } from 'zod';
import { formatPath, knownKeys, nearest, yamlPath } from './problems.js';
import { configSchema, type Config } from './schema.js';

export class ConfigError extends Error {
  readonly problems: string[];
  constructor(file: string, problems: string[]) {
    super(`${file}: invalid configuration\n${problems.map((p) => `  - ${p}`).join('\n')}`);
    this.name = 'ConfigError';
    this.problems = problems;
  }
}

const VAR = /\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}/g;

/**
 * `${VAR}` and `${VAR:-default}` from the environment (D15); a missing variable is a problem, not an empty
 * string, named with the config path it was for.
 */
export function substituteEnv(text: string, env: NodeJS.ProcessEnv, problems: string[], where: string): string {
  return text.replace(VAR, (_m, name: string, fallback?: string) => {
    const value = env[name];
    if (value !== undefined && value !== '') return value;
    if (fallback !== undefined) return fallback;
    problems.push(`${where}: environment variable ${name} is not set`);
    return '';
  });
}

/**
 * Substitutes inside string values only, after parsing: comments are left alone and a secret's
 * characters (`#`, `:`, quotes) stay verbatim. A value that is exactly `${VAR}` and reads as a number
 * or a boolean becomes one, so `port: ${PORT}` works.
 */
function substituteInDocument(doc: ReturnType<typeof parseDocument>, env: NodeJS.ProcessEnv, problems: string[]): void {
  const plain: unknown = doc.toJS();
  visit(doc, {
    Scalar(_key, node, ancestors) {
      if (typeof node.value !== 'string' || !node.value.includes('${')) return;
      const whole = /^\$\{[^}]+\}$/.test(node.value);
      const value = substituteEnv(node.value, env, problems, formatPath(yamlPath(ancestors, node), plain) || '(root)');
      if (whole && /^-?\d+(\.\d+)?$/.test(value)) node.value = Number(value);
      else if (whole && (value === 'true' || value === 'false')) node.value = value === 'true';
      else node.value = value;
    },
  });
}

/** Validates a parsed document; every problem is reported with its path (D15), an unknown key with the nearest known one. */
export function validateConfig(doc: unknown, file = 'config'): Config {
  const result = configSchema.safeParse(doc);
  if (!result.success) {
    throw new ConfigError(
      file,
      result.error.issues
        .flatMap(unionBranch)
        .map(
          (i) =>
            `${formatPath(i.path, doc) || '(root)'}: ${i.message}${i.code === 'unrecognized_keys' ? suggestions(i.keys, i.path) : ''}`,
        ),
    );
  }
  return result.data;
}

/**
 * A value none of a union's forms takes (a text given as one string or per language) is reported by the one
 * form of its type, so that a text that is too long says so instead of "Invalid input".
 */
function unionBranch(issue: z.core.$ZodIssue): z.core.$ZodIssue[] {
  if (issue.code !== 'invalid_union' || !Array.isArray(issue.errors)) return [issue];
  const ofItsType = issue.errors.filter((branch) => branch.some((i) => i.code !== 'invalid_type'));
  if (ofItsType.length !== 1) return [issue];
  return ofItsType[0].flatMap((i) => unionBranch({ ...i, path: [...issue.path, ...i.path] } as z.core.$ZodIssue));
}

function suggestions(keys: readonly string[], path: readonly PropertyKey[]): string {
  const known = knownKeys(configSchema, path);
  const near = keys
    .map((k) => [k, nearest(k, known)] as const)
    .filter((pair): pair is readonly [string, string] => pair[1] !== undefined);
  return near.map(([k, n]) => `; ${k}: did you mean ${n}?`).join('');
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
  const parsed = parseDocument(text); // YAML is a superset of JSON: one parser serves both
  if (parsed.errors.length) {
    throw new ConfigError(path, [`not valid YAML/JSON: ${parsed.errors[0].message.split('\n')[0]}`]);
  }
  substituteInDocument(parsed, env, problems);
  const doc: unknown = parsed.toJS();
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
