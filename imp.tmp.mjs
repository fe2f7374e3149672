import v8 from 'node:v8';
const gc = global.gc;
const used = () => { gc(); gc(); return process.memoryUsage().heapUsed / 1e6; };
const list = process.argv.slice(2);
let last = used();
console.log('start', last.toFixed(1));
for (const m of list) {
  await import(m);
  const u = used();
  console.log((u - last).toFixed(2).padStart(7), m);
  last = u;
}
