-- The conversation (FEP-7888 context) a local object belongs to: the IRI
-- of the thread's context collection, "{root}/context" for a thread a
-- public post started here, or the context a remote parent named. NULL
-- when the object is in no known thread. Served at {root}/context.
ALTER TABLE objects ADD COLUMN context TEXT;
CREATE INDEX objects_context ON objects(context, id) WHERE context IS NOT NULL;
