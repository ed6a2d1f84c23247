import zlib from 'node:zlib';
import type { CredentialType } from '../config/schema.js';
import { invalidRequest } from './errors.js';
import { shown } from './text.js';

/** D9: defaults for image attributes. */
export const DEFAULT_IMAGE_FORMATS: readonly string[] = ['image/png', 'image/jpeg'];
export const DEFAULT_IMAGE_MAX_BYTES = 262144;

const DATA_URI = /^data:([A-Za-z0-9!#$&^_.+-]+\/[A-Za-z0-9!#$&^_.+-]+);base64,(.*)$/s;
const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

/**
 * Validates one image claim (spec Errors: TokenHint image "Images not valid" -> invalid_request; D9).
 * `name` (optional, default "image") is the attribute name used in descriptions.
 */
export function validateImageDataUri(
  value: unknown,
  opts: { formats?: readonly string[]; maxBytes?: number; name?: string },
): { mediaType: string; bytes: number } {
  const label = `id_token_hint: image attribute ${shown(opts.name ?? 'image')}`;
  const bad = (reason: string) => invalidRequest(`${label} ${reason}`);
  const formats = opts.formats ?? DEFAULT_IMAGE_FORMATS;
  const maxBytes = opts.maxBytes ?? DEFAULT_IMAGE_MAX_BYTES;

  // D9: a data: URI, base64 (RFC 2397)
  const m = typeof value === 'string' ? DATA_URI.exec(value) : null;
  if (!m) throw bad('is not a data:<media type>;base64,<data> URI');
  const mediaType = m[1].toLowerCase(); // RFC 2045 5.1: type and subtype are case-insensitive
  const data = m[2];
  // D9: image/png or image/jpeg by default, narrowed per attribute
  if (!formats.includes(mediaType)) {
    throw bad(`has a media type that is not allowed (allowed: ${formats.join(', ')})`);
  }
  // RFC 4648 4: strict alphabet and padding, canonical encoding
  if (data === '' || data.length % 4 !== 0 || !BASE64.test(data)) throw bad('is not valid base64 (RFC 4648 section 4)');
  // D9: size limit on decoded bytes, computed before decoding
  const padding = data.endsWith('==') ? 2 : data.endsWith('=') ? 1 : 0;
  const decodedLength = (data.length / 4) * 3 - padding;
  if (decodedLength > maxBytes) throw bad(`is ${decodedLength} bytes decoded, over the limit of ${maxBytes} bytes`);
  const bytes = Buffer.from(data, 'base64');
  if (bytes.toString('base64') !== data) throw bad('is not valid base64 (non-canonical padding bits)');

  // D9: the bytes must carry the format's signature and parse as that format
  const problem = mediaType === 'image/png' ? pngProblem(bytes) : mediaType === 'image/jpeg' ? jpegProblem(bytes) : 'has an unsupported format';
  if (problem) throw bad(`is not a valid ${mediaType}: ${problem}`);
  return { mediaType, bytes: bytes.length };
}

/** Checks every present image attribute with its template settings (D9). */
export function validateImages(attributes: Record<string, unknown>, type: CredentialType): void {
  for (const [name, spec] of Object.entries(type.attributes)) {
    if (spec.type !== 'image' || !Object.hasOwn(attributes, name) || attributes[name] === undefined) continue;
    validateImageDataUri(attributes[name], { formats: spec.formats, maxBytes: spec.maxBytes, name });
  }
}

// ---------------------------------------------------------------------------------------------------
// PNG (ISO/IEC 15948, W3C PNG 3rd ed. section 5)

const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
/** PNG 11.2.2: allowed bit depths per colour type. */
const PNG_BIT_DEPTHS: Record<number, number[]> = { 0: [1, 2, 4, 8, 16], 2: [8, 16], 3: [1, 2, 4, 8], 4: [8, 16], 6: [8, 16] };

/** Returns what is wrong with a PNG, or undefined when its chunk structure is valid. */
export function pngProblem(buf: Buffer): string | undefined {
  // PNG 5.2: 8-byte signature
  if (buf.length < 8 || !buf.subarray(0, 8).equals(PNG_SIGNATURE)) return 'missing PNG signature';
  let offset = 8;
  let index = 0;
  let sawIdat = false;
  let sawPlte = false;
  let colourType = -1;
  while (offset < buf.length) {
    // PNG 5.3: length (4), type (4), data (length), CRC (4)
    if (offset + 12 > buf.length) return 'truncated chunk header';
    const length = buf.readUInt32BE(offset);
    if (length > 0x7fffffff) return 'chunk length out of range';
    const type = buf.toString('latin1', offset + 4, offset + 8);
    if (!/^[A-Za-z]{4}$/.test(type)) return 'invalid chunk type';
    const end = offset + 8 + length;
    if (end + 4 > buf.length) return `chunk ${type} is truncated`;
    // PNG 5.3: CRC over chunk type and data
    if (crc32(buf.subarray(offset + 4, end)) !== buf.readUInt32BE(end)) return `chunk ${type} has a bad CRC`;
    const data = buf.subarray(offset + 8, end);

    if (index === 0) {
      // PNG 5.6 / 11.2.2: IHDR first, 13 bytes, non-zero dimensions
      if (type !== 'IHDR' || length !== 13) return 'first chunk is not a 13-byte IHDR';
      const width = data.readUInt32BE(0);
      const height = data.readUInt32BE(4);
      if (width === 0 || height === 0 || width > 0x7fffffff || height > 0x7fffffff) return 'IHDR has an invalid width or height';
      colourType = data[9];
      if (!PNG_BIT_DEPTHS[colourType]?.includes(data[8])) return 'IHDR has an invalid bit depth / colour type';
      if (data[10] !== 0 || data[11] !== 0 || data[12] > 1) return 'IHDR has an invalid compression, filter or interlace method';
    } else if (type === 'IHDR') {
      return 'IHDR appears more than once';
    }
    if (type === 'PLTE') sawPlte = true;
    if (type === 'IDAT') sawIdat = true;
    offset = end + 4;
    index++;
    if (type === 'IEND') {
      // PNG 5.6: IEND is the last chunk, empty
      if (length !== 0) return 'IEND is not empty';
      if (offset !== buf.length) return 'data after IEND';
      if (!sawIdat) return 'no IDAT chunk';
      if (colourType === 3 && !sawPlte) return 'palette image without PLTE';
      return undefined;
    }
  }
  return 'does not end with IEND';
}

const CRC_TABLE = (() => {
  const t = new Uint32Array(256);
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    t[n] = c >>> 0;
  }
  return t;
})();

const nativeCrc32 = (zlib as { crc32?: (d: Uint8Array) => number }).crc32;

/** CRC-32 (PNG annex D): zlib.crc32 where Node has it (20.15+), else the table implementation. */
export function crc32(data: Uint8Array): number {
  return typeof nativeCrc32 === 'function' ? nativeCrc32(data) >>> 0 : crc32Table(data);
}

/** CRC-32 by table (PNG annex D), for Node versions without zlib.crc32. */
export function crc32Table(data: Uint8Array): number {
  let c = 0xffffffff;
  for (let i = 0; i < data.length; i++) c = CRC_TABLE[(c ^ data[i]) & 0xff] ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
}

// ---------------------------------------------------------------------------------------------------
// JPEG (ITU-T T.81 annex B)

/** T.81 table B.1: SOFn markers (C4 DHT, C8 JPG and CC DAC are not frame headers). */
const isSof = (m: number) => m >= 0xc0 && m <= 0xcf && m !== 0xc4 && m !== 0xc8 && m !== 0xcc;

/** Returns what is wrong with a JPEG, or undefined when its marker structure is valid. */
export function jpegProblem(buf: Buffer): string | undefined {
  // T.81 B.2.1: SOI first
  if (buf.length < 4 || buf[0] !== 0xff || buf[1] !== 0xd8) return 'missing JPEG SOI marker';
  let offset = 2;
  let sawFrame = false;
  while (offset < buf.length) {
    // T.81 B.1.1.2: a marker is 0xFF followed by a code; extra 0xFF are fill bytes
    if (buf[offset] !== 0xff) return 'expected a marker';
    while (offset < buf.length && buf[offset] === 0xff) offset++;
    if (offset >= buf.length) return 'truncated marker';
    const marker = buf[offset++];
    if (marker === 0x00) return 'invalid marker';
    if (marker === 0xd8) return 'unexpected SOI marker';
    if (marker === 0xd9) return 'EOI before any scan';
    if (marker === 0x01 || (marker >= 0xd0 && marker <= 0xd7)) continue; // TEM, RSTn: no length
    // T.81 B.1.1.4: 2-byte segment length including itself, inside the buffer
    if (offset + 2 > buf.length) return 'truncated segment length';
    const length = buf.readUInt16BE(offset);
    if (length < 2 || offset + length > buf.length) return 'segment length outside the data';
    const segment = buf.subarray(offset + 2, offset + length);
    if (isSof(marker)) {
      // T.81 B.2.2: frame header P, Y, X, Nf, then 3 bytes per component
      if (segment.length < 6) return 'frame header too short';
      const width = segment.readUInt16BE(3);
      const components = segment[5];
      if (width === 0 || components === 0 || segment.length !== 6 + 3 * components) return 'invalid frame header';
      sawFrame = true;
    }
    offset += length;
    if (marker === 0xda) {
      // T.81 B.2.3: scan header Ns, 2 bytes per component, Ss, Se, Ah/Al
      if (segment.length < 1 || segment.length !== 4 + 2 * segment[0]) return 'invalid scan header';
      if (!sawFrame) return 'scan before any frame header (SOFn)';
      // T.81 B.2.1: entropy-coded data follows, and the image ends with EOI
      if (buf.length < offset + 2 || buf[buf.length - 2] !== 0xff || buf[buf.length - 1] !== 0xd9) return 'does not end with EOI';
      return undefined;
    }
  }
  return 'no scan (SOS) found';
}
