// Makes public/'s icons from the sidebar's mark (app/icon.svg): favicon.ico (16, 32 and 48 px),
// apple-touch-icon.png (180 px, full-bleed: iOS rounds the corners itself) and icon-192.png /
// icon-512.png for the web manifest (app/manifest.ts). The PNGs come from rsvg-convert (Debian's
// librsvg2-bin); the ICO is assembled here, with PNG-encoded entries (read by every browser since
// 2007). The outputs are committed, so building the console never needs the tool:
//   node scripts/make-icons.mjs
import { execFileSync } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import path from "node:path";

const root = path.resolve(import.meta.dirname, "..");
const mark = readFileSync(path.join(root, "app", "icon.svg"), "utf8");
// The same mark on a square: the rounded rect grows to the edges, the tick stays where it is.
const fullBleed = mark.replace(/<rect [^>]*\/>/, '<rect width="24" height="24" fill="#3557d6"/>');

function png(svg, size) {
  return execFileSync("rsvg-convert", ["--width", String(size), "--height", String(size), "--format", "png"], { input: svg });
}

/** An ICO file: a 6-byte header, a 16-byte directory entry per image, then the images (PNG here). */
function ico(images) {
  const header = Buffer.alloc(6);
  header.writeUInt16LE(0, 0);
  header.writeUInt16LE(1, 2); // 1 = icon
  header.writeUInt16LE(images.length, 4);
  let offset = 6 + 16 * images.length;
  const entries = images.map(({ size, data }) => {
    const entry = Buffer.alloc(16);
    entry.writeUInt8(size >= 256 ? 0 : size, 0); // width (0 means 256)
    entry.writeUInt8(size >= 256 ? 0 : size, 1); // height
    entry.writeUInt8(0, 2); // no palette
    entry.writeUInt8(0, 3);
    entry.writeUInt16LE(1, 4); // colour planes
    entry.writeUInt16LE(32, 6); // bits per pixel
    entry.writeUInt32LE(data.length, 8);
    entry.writeUInt32LE(offset, 12);
    offset += data.length;
    return entry;
  });
  return Buffer.concat([header, ...entries, ...images.map((image) => image.data)]);
}

const out = (name, data) => {
  writeFileSync(path.join(root, "public", name), data);
  process.stdout.write(`public/${name}: ${data.length} bytes\n`);
};
out("favicon.ico", ico([16, 32, 48].map((size) => ({ size, data: png(mark, size) }))));
out("apple-touch-icon.png", png(fullBleed, 180));
out("icon-192.png", png(mark, 192));
out("icon-512.png", png(mark, 512));
