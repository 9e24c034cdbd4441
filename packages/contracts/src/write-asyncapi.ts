#!/usr/bin/env node
/** Writes asyncapi.json (the package's root) from the contracts: `pnpm --filter @outbox-inbox/contracts asyncapi`. */
import { writeFileSync } from 'node:fs';
import { asyncApiDocument } from './asyncapi.ts';
import { asyncApiFile, asyncApiText } from './asyncapi-file.ts';

writeFileSync(asyncApiFile, asyncApiText(asyncApiDocument()));
console.log(`wrote ${asyncApiFile}`);
