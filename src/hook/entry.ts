#!/usr/bin/env node
import { runHookProcess } from './main.js';

// The bridge's own entry point (and the bundle's): `node dist/hook/entry.js <runtime>`.
await runHookProcess(process.argv.slice(2));
