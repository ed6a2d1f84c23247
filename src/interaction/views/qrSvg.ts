import QRCode from 'qrcode';

/** A scratch buffer for the path, grown when a larger code needs it (the writer is synchronous). */
let scratch = Buffer.allocUnsafe(16 * 1024);

/**
 * The QR code of a wallet link as an SVG: qrcode's encoder, and the dark modules written as one path
 * of horizontal runs (`M x y h w v1 h -w z`).
 *
 * - One byte-mode segment and a fixed mask skip the encoder's search over segmentations and its eight
 *   mask trials (most of a prompt page's CPU once; any mask gives a valid, scannable code).
 * - The path is written digit by digit into a byte buffer: qrcode's own SVG writer, and the same path
 *   built by string concatenation, cost as much as the encoding itself (bench/micro.ts).
 */
export function qrSvg(text: string, margin = 1): string {
  const { size, data } = QRCode.create([{ data: Buffer.from(text, 'utf8'), mode: 'byte' }], { errorCorrectionLevel: 'M', maskPattern: 0 }).modules;
  // at most one run per two modules, each at most "M999 999h999v1h-999z"
  const worst = Math.ceil((size * size) / 2) * 21;
  if (scratch.length < worst) scratch = Buffer.allocUnsafe(worst);
  const out = scratch;
  let p = 0;
  const digits = (v: number) => {
    if (v >= 100) out[p++] = 48 + Math.floor(v / 100);
    if (v >= 10) out[p++] = 48 + (Math.floor(v / 10) % 10);
    out[p++] = 48 + (v % 10);
  };
  for (let y = 0; y < size; y++) {
    const row = y * size;
    for (let x = 0; x < size; ) {
      if (!data[row + x]) {
        x++;
        continue;
      }
      let end = x + 1;
      while (end < size && data[row + end]) end++;
      const w = end - x;
      out[p++] = 0x4d; // M
      digits(x + margin);
      out[p++] = 0x20;
      digits(y + margin);
      out[p++] = 0x68; // h
      digits(w);
      out[p++] = 0x76; // v
      out[p++] = 0x31; // 1
      out[p++] = 0x68; // h
      out[p++] = 0x2d; // -
      digits(w);
      out[p++] = 0x7a; // z
      x = end;
    }
  }
  const side = size + 2 * margin;
  return `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 ${side} ${side}" shape-rendering="crispEdges"><path fill="#fff" d="M0 0h${side}v${side}H0z"/><path fill="#000" d="${out.toString('latin1', 0, p)}"/></svg>`;
}
