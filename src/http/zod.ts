import { extendZodWithOpenApi } from '@asteasolutions/zod-to-openapi';
import { z } from 'zod';
import { storable, UNSTORABLE_REASON } from '../text';

// The schemas that validate requests also describe them in /openapi.json.
extendZodWithOpenApi(z);

export { z };

/** A string a request may store: one holding U+0000 or a lone surrogate is the door's validation error. */
export const text = () => z.string().refine(storable, { error: UNSTORABLE_REASON });
