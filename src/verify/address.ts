/** Checks of `address/<address>.json` (full and capped documents). */
import { type Obj, HEX64, CAPPED, isObj, arr, parseValue, exactInt, outpoint, sameAsText } from './values.js';
import { type Verifier } from './verifier.js';

export function checkAddress(ver: Verifier, rel: string, address: string, doc: unknown, text: string): void {
  ver.counts.addresses++;
  if (!isObj(doc)) return; // shape problems are reported by the schema check (shape.ts)
  if (typeof doc.error === 'string') {
    ver.counts.cappedAddresses++;
    ver.cappedSeen.add(address);
    if (!CAPPED.test(doc.error)) ver.problem(rel, `is an error document other than "Too many outputs": ${doc.error}`);
    else if (ver.site && !ver.site.capped.has(address)) ver.problem(rel, 'is capped but not listed in _site.json cappedAddresses');
    return;
  }
  if (doc.address !== address) ver.problem(rel, `address field is ${String(doc.address)}`);
  const coinIn = exactInt(doc.coin_in, text, 'coin_in');
  const coinOut = exactInt(doc.coin_out, text, 'coin_out');
  const balance = exactInt(doc.balance, text, 'balance');
  if (coinIn === undefined || coinOut === undefined || balance === undefined) return; // a shape problem
  if (coinIn - coinOut !== balance) ver.problem(rel, `coin_in − coin_out = ${coinIn - coinOut}, but balance is ${balance}`);

  // Unspent entries: each is an output of its /tx document, paying here, unspent.
  let unspentSum = 0n;
  const unspent = arr(doc.unspent);
  unspent.forEach((u, k) => {
    const op = isObj(u) ? outpoint(u.tx) : undefined;
    const value = isObj(u) ? parseValue(u.value) : undefined;
    if (!op || value === undefined || !HEX64.test(op.hash)) return; // a shape problem
    unspentSum += value;
    const tx = ver.txCache.get(op.hash);
    const out = tx ? tx.outs[op.n] : undefined;
    if (!out) ver.problem(rel, `unspent[${k}] ${op.hash}:${op.n} is not an output of a /tx document`);
    else if (out.address !== address) ver.problem(rel, `unspent[${k}] ${op.hash}:${op.n} pays ${String(out.address)}, not this address`);
    else if (out.next !== undefined) ver.problem(rel, `unspent[${k}] ${op.hash}:${op.n} is spent (next_in ${out.next})`);
    else if (out.value !== (u as Obj).value) ver.problem(rel, `unspent[${k}] ${op.hash}:${op.n} has value ${String((u as Obj).value)}, the tx says ${String(out.value)}`);
  });
  if (unspentSum !== balance) ver.problem(rel, `unspent outputs sum to ${unspentSum}, but balance is ${balance}`);

  // Transactions: embedded docs equal the /tx files, and the totals follow from them.
  const txs = isObj(doc.transactions) ? doc.transactions : {};
  const ids = Object.keys(txs);
  if (doc.tx_sz !== ids.length) ver.problem(rel, `tx_sz is ${String(doc.tx_sz)}, transactions has ${ids.length}`);
  let sumIn = 0n;
  let sumOut = 0n;
  let unspentCount = 0;
  let receivers = 0;
  const spenders = new Set<string>();
  for (const id of ids) {
    const embedded = txs[id];
    const file = HEX64.test(id) ? ver.txText(id) : null;
    if (file === null) ver.problem(rel, `transactions has ${id}, which has no /tx document`);
    else if (file !== JSON.stringify(embedded) && !sameAsText(embedded, file)) ver.problem(rel, `transactions[${id}] differs from tx/${id}.json`);
    if (!isObj(embedded)) continue;
    let pays = false;
    arr(embedded.out).forEach((o) => {
      if (!isObj(o) || o.address !== address) return;
      pays = true;
      const v = parseValue(o.value) ?? 0n;
      sumIn += v;
      const ni = outpoint(o.next_in);
      if (ni) {
        sumOut += v;
        spenders.add(ni.hash);
      } else {
        unspentCount++;
      }
    });
    if (pays) receivers++;
  }
  for (const s of spenders) if (!Object.hasOwn(txs, s)) ver.problem(rel, `transactions lacks ${s}, which spends from this address`);
  if (sumIn !== coinIn) ver.problem(rel, `coin_in is ${coinIn}, its transactions pay ${sumIn} to it`);
  if (sumOut !== coinOut) ver.problem(rel, `coin_out is ${coinOut}, its spent outputs hold ${sumOut}`);
  if (unspentCount !== unspent.length) ver.problem(rel, `unspent lists ${unspent.length} outputs, its transactions leave ${unspentCount} unspent`);
  if (doc.tx_in_sz !== receivers) ver.problem(rel, `tx_in_sz is ${String(doc.tx_in_sz)}, ${receivers} transactions pay to it`);
  if (doc.tx_out_sz !== spenders.size) ver.problem(rel, `tx_out_sz is ${String(doc.tx_out_sz)}, ${spenders.size} transactions spend from it`);
}
