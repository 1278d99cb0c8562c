/**
 * Name and value bytes as text, as every document shows them. Pure and dependency-free (no
 * Buffer, no node: imports): the build, the edge routers and the browsing UI run this one
 * implementation.
 */

const UTF8_STRICT = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/**
 * Name or value bytes as text (decisions.md: the pushed bytes decoded as UTF-8, every byte
 * kept): UTF-8 when valid — a leading BOM (EF BB BF) stays U+FEFF — else Latin-1, one char per
 * byte (never lossy). Dependency-free (no Buffer): the edge routers use it too.
 */
export function nameBytesToText(bytes: Uint8Array): { text: string; utf8: boolean } {
  try {
    return { text: UTF8_STRICT.decode(bytes), utf8: true };
  } catch {
    let text = '';
    for (let i = 0; i < bytes.length; i++) text += String.fromCharCode(bytes[i]!);
    return { text, utf8: false };
  }
}
