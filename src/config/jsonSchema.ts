import { writeFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import { z } from 'zod';
import { configSchema } from './schema.js';

/** The config file's JSON Schema (D15), for editors and operators' CI; generated from the zod schema. */
export function configJsonSchema(): Record<string, unknown> {
  return {
    $id: 'https://github.com/vc-oidc-provider/config.schema.json',
    title: 'VC OpenID Provider configuration',
    ...(z.toJSONSchema(configSchema, { io: 'input', unrepresentable: 'any' }) as Record<string, unknown>),
  };
}

export async function writeJsonSchema(file: string): Promise<string> {
  const path = resolve(file);
  await writeFile(path, `${JSON.stringify(configJsonSchema(), null, 2)}\n`);
  return path;
}
