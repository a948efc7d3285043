-- The warehouse's tables as DuckDB DDL, in dependency order. Generated from the SQLAlchemy
-- tables of ctxprior/schema/*.py by `python scripts/docs_tables.py --update`; do not edit.

CREATE TABLE dataset (
    dataset_id INTEGER NOT NULL,
    name TEXT NOT NULL,
    source_format TEXT NOT NULL,
    source_path TEXT,
    source_sha256 TEXT,
    description TEXT,
    separator TEXT DEFAULT '',
    ctxprior_version TEXT NOT NULL,
    created_at TIMESTAMP WITHOUT TIME ZONE NOT NULL,
    PRIMARY KEY (dataset_id),
    UNIQUE (name)
);

CREATE TABLE meta (
    key TEXT NOT NULL,
    value TEXT NOT NULL,
    PRIMARY KEY (key)
);

CREATE TABLE answer (
    answer_id INTEGER NOT NULL,
    dataset_id INTEGER NOT NULL,
    name TEXT NOT NULL,
    uri TEXT,
    PRIMARY KEY (answer_id),
    UNIQUE (dataset_id, name, uri)
);

CREATE TABLE answer_label (
    dataset_id INTEGER NOT NULL,
    ordinal INTEGER NOT NULL,
    label TEXT NOT NULL,
    PRIMARY KEY (dataset_id, ordinal)
);

CREATE TABLE covariate (
    covariate_id INTEGER NOT NULL,
    name TEXT NOT NULL,
    kind TEXT NOT NULL,
    dataset_id INTEGER,
    view_name TEXT NOT NULL,
    key_columns TEXT NOT NULL,
    value_columns TEXT NOT NULL,
    source_path TEXT,
    source_sha256 TEXT,
    description TEXT,
    params_json TEXT NOT NULL,
    status TEXT NOT NULL,
    n_rows BIGINT,
    n_matched BIGINT,
    data_table TEXT,
    ctxprior_version TEXT NOT NULL,
    added_at TIMESTAMP WITHOUT TIME ZONE NOT NULL,
    updated_at TIMESTAMP WITHOUT TIME ZONE NOT NULL,
    PRIMARY KEY (covariate_id),
    UNIQUE (name)
);

CREATE TABLE dataset_build (
    dataset_id INTEGER NOT NULL,
    relations_path TEXT NOT NULL,
    relations_sha256 TEXT NOT NULL,
    relations_yaml TEXT NOT NULL,
    params_json TEXT NOT NULL,
    stats_json TEXT NOT NULL,
    PRIMARY KEY (dataset_id)
);

CREATE TABLE dataset_source (
    dataset_id INTEGER NOT NULL,
    ordinal INTEGER NOT NULL,
    role TEXT NOT NULL,
    path TEXT NOT NULL,
    format TEXT NOT NULL,
    size_bytes BIGINT NOT NULL,
    sha256 TEXT NOT NULL,
    n_lines BIGINT,
    n_malformed BIGINT,
    PRIMARY KEY (dataset_id, ordinal)
);

CREATE TABLE dynamicqa_calibration (
    calibration_id INTEGER NOT NULL,
    dataset_id INTEGER NOT NULL,
    encoder TEXT NOT NULL,
    encoder_revision TEXT,
    method TEXT NOT NULL,
    n_pos INTEGER NOT NULL,
    n_neg INTEGER NOT NULL,
    threshold DOUBLE PRECISION NOT NULL,
    balanced_accuracy_fit DOUBLE PRECISION NOT NULL,
    balanced_accuracy_heldout DOUBLE PRECISION NOT NULL,
    tpr_heldout DOUBLE PRECISION NOT NULL,
    tnr_heldout DOUBLE PRECISION NOT NULL,
    seed BIGINT NOT NULL,
    created_at TIMESTAMP WITHOUT TIME ZONE NOT NULL,
    PRIMARY KEY (calibration_id)
);

CREATE TABLE entity (
    entity_id INTEGER NOT NULL,
    dataset_id INTEGER NOT NULL,
    name TEXT NOT NULL,
    kind TEXT NOT NULL,
    uri TEXT,
    entity_class TEXT,
    PRIMARY KEY (entity_id),
    UNIQUE (dataset_id, name, kind, uri)
);

CREATE TABLE relation (
    relation_id INTEGER NOT NULL,
    dataset_id INTEGER NOT NULL,
    name TEXT NOT NULL,
    short_name TEXT NOT NULL,
    is_reverse BOOLEAN NOT NULL,
    position INTEGER NOT NULL,
    PRIMARY KEY (relation_id),
    UNIQUE (dataset_id, name)
);

CREATE TABLE sample (
    sample_id INTEGER NOT NULL,
    dataset_id INTEGER NOT NULL,
    design TEXT NOT NULL,
    seed BIGINT NOT NULL,
    n_entities INTEGER,
    n_contexts INTEGER,
    context_types TEXT NOT NULL,
    params_json TEXT NOT NULL,
    ctxprior_version TEXT NOT NULL,
    created_at TIMESTAMP WITHOUT TIME ZONE NOT NULL,
    PRIMARY KEY (sample_id)
);

CREATE TABLE context_template (
    context_template_id INTEGER NOT NULL,
    relation_id INTEGER NOT NULL,
    context_type TEXT NOT NULL,
    ordinal INTEGER NOT NULL,
    template TEXT NOT NULL,
    PRIMARY KEY (context_template_id),
    UNIQUE (relation_id, context_type, ordinal)
);

CREATE TABLE cooccurrence_name (
    covariate_id INTEGER NOT NULL,
    name_id INTEGER NOT NULL,
    name TEXT NOT NULL,
    n_words INTEGER NOT NULL,
    PRIMARY KEY (covariate_id, name_id)
);

CREATE TABLE cooccurrence_name_count (
    covariate_id INTEGER NOT NULL,
    shard_id INTEGER NOT NULL,
    name_id INTEGER NOT NULL,
    count BIGINT NOT NULL,
    PRIMARY KEY (covariate_id, shard_id, name_id)
);

CREATE TABLE cooccurrence_pair (
    covariate_id INTEGER NOT NULL,
    pair_id INTEGER NOT NULL,
    name_id_lo INTEGER NOT NULL,
    name_id_hi INTEGER NOT NULL,
    PRIMARY KEY (covariate_id, pair_id)
);

CREATE TABLE cooccurrence_pair_count (
    covariate_id INTEGER NOT NULL,
    shard_id INTEGER NOT NULL,
    pair_id INTEGER NOT NULL,
    count BIGINT NOT NULL,
    PRIMARY KEY (covariate_id, shard_id, pair_id)
);

CREATE TABLE cooccurrence_shard (
    covariate_id INTEGER NOT NULL,
    shard_id INTEGER NOT NULL,
    path TEXT NOT NULL,
    size_bytes BIGINT NOT NULL,
    mtime_ns BIGINT NOT NULL,
    sha256 TEXT NOT NULL,
    n_lines BIGINT NOT NULL,
    n_documents BIGINT NOT NULL,
    n_words BIGINT NOT NULL,
    n_bad_json BIGINT NOT NULL,
    n_missing_text BIGINT NOT NULL,
    bad_examples TEXT,
    seconds DOUBLE PRECISION,
    worker TEXT,
    finished_at TIMESTAMP WITHOUT TIME ZONE NOT NULL,
    PRIMARY KEY (covariate_id, shard_id),
    UNIQUE (covariate_id, path)
);

CREATE TABLE fact (
    fact_id INTEGER NOT NULL,
    relation_id INTEGER NOT NULL,
    position INTEGER NOT NULL,
    entity_id INTEGER NOT NULL,
    answer_id INTEGER,
    entity_kind TEXT NOT NULL,
    label TEXT,
    category TEXT,
    uri_degree BIGINT,
    namesake_degree BIGINT,
    namesake_num_uris BIGINT,
    predicate_degree BIGINT,
    PRIMARY KEY (fact_id),
    UNIQUE (relation_id, entity_kind, position)
);

CREATE TABLE fake_generation (
    generation_id INTEGER NOT NULL,
    dataset_id INTEGER NOT NULL,
    relation_id INTEGER NOT NULL,
    method TEXT NOT NULL,
    model TEXT,
    model_revision TEXT,
    endpoint TEXT,
    prompt_style TEXT,
    seed BIGINT,
    params_json TEXT NOT NULL,
    calls_json TEXT,
    source_path TEXT,
    source_sha256 TEXT,
    n_requested INTEGER NOT NULL,
    n_accepted INTEGER NOT NULL,
    n_rejected INTEGER NOT NULL,
    rejected_json TEXT NOT NULL,
    status TEXT NOT NULL,
    ctxprior_version TEXT NOT NULL,
    created_at TIMESTAMP WITHOUT TIME ZONE NOT NULL,
    PRIMARY KEY (generation_id)
);

CREATE TABLE kg_degree (
    covariate_id INTEGER NOT NULL,
    entity_uri TEXT NOT NULL,
    relation_uri TEXT NOT NULL,
    degree BIGINT NOT NULL,
    PRIMARY KEY (covariate_id, entity_uri, relation_uri)
);

CREATE TABLE kg_entity_degree (
    covariate_id INTEGER NOT NULL,
    entity_uri TEXT NOT NULL,
    total_degree BIGINT NOT NULL,
    n_relations BIGINT NOT NULL,
    PRIMARY KEY (covariate_id, entity_uri)
);

CREATE TABLE query_form (
    query_form_id INTEGER NOT NULL,
    relation_id INTEGER NOT NULL,
    query_type TEXT NOT NULL,
    ordinal INTEGER NOT NULL,
    name TEXT NOT NULL,
    template TEXT NOT NULL,
    PRIMARY KEY (query_form_id),
    UNIQUE (relation_id, query_type, ordinal)
);

CREATE TABLE relation_class (
    relation_id INTEGER NOT NULL,
    role TEXT NOT NULL,
    class_name TEXT NOT NULL,
    fraction DOUBLE PRECISION NOT NULL,
    PRIMARY KEY (relation_id, role, class_name)
);

CREATE TABLE run (
    run_id INTEGER NOT NULL,
    kind TEXT NOT NULL,
    sample_id INTEGER,
    dataset_id INTEGER,
    model TEXT NOT NULL,
    model_revision TEXT,
    dtype TEXT,
    quantization TEXT,
    device TEXT,
    estimator TEXT NOT NULL,
    batch_size INTEGER,
    seed BIGINT,
    config_json TEXT NOT NULL,
    ctxprior_version TEXT NOT NULL,
    host TEXT,
    pid INTEGER,
    status TEXT NOT NULL,
    error TEXT,
    units_total INTEGER,
    units_done INTEGER,
    prompts_done BIGINT,
    started_at TIMESTAMP WITHOUT TIME ZONE NOT NULL,
    ended_at TIMESTAMP WITHOUT TIME ZONE,
    PRIMARY KEY (run_id)
);

CREATE TABLE analysis_distribution (
    run_id INTEGER NOT NULL,
    run_ids TEXT NOT NULL,
    model TEXT NOT NULL,
    analysis TEXT NOT NULL,
    query_type TEXT NOT NULL,
    series TEXT NOT NULL,
    bin INTEGER NOT NULL,
    bin_lo DOUBLE PRECISION,
    bin_hi DOUBLE PRECISION,
    n INTEGER NOT NULL,
    n_nan INTEGER,
    share DOUBLE PRECISION,
    mean DOUBLE PRECISION,
    q25 DOUBLE PRECISION,
    median DOUBLE PRECISION,
    q75 DOUBLE PRECISION,
    max DOUBLE PRECISION,
    created_at TIMESTAMP WITHOUT TIME ZONE NOT NULL
);

CREATE TABLE analysis_replicate (
    group_run_id INTEGER NOT NULL,
    run_id INTEGER NOT NULL,
    sample_id INTEGER,
    seed BIGINT,
    counted BOOLEAN NOT NULL,
    reason TEXT,
    created_at TIMESTAMP WITHOUT TIME ZONE NOT NULL
);

CREATE TABLE analysis_result (
    run_id INTEGER NOT NULL,
    analysis TEXT NOT NULL,
    relation_id INTEGER,
    relation TEXT NOT NULL,
    query_type TEXT NOT NULL,
    test TEXT NOT NULL,
    unit TEXT NOT NULL,
    alternative TEXT,
    label1 TEXT,
    label2 TEXT,
    n1 INTEGER,
    n2 INTEGER,
    mean1 DOUBLE PRECISION,
    mean2 DOUBLE PRECISION,
    t DOUBLE PRECISION,
    p DOUBLE PRECISION,
    p_adj DOUBLE PRECISION,
    significant BOOLEAN,
    effect_size DOUBLE PRECISION,
    k INTEGER,
    seed INTEGER,
    alpha DOUBLE PRECISION,
    skip_reason TEXT,
    note TEXT,
    created_at TIMESTAMP WITHOUT TIME ZONE NOT NULL
);

CREATE TABLE closed_book_answer (
    run_id INTEGER NOT NULL,
    query_form_id INTEGER NOT NULL,
    fact_id INTEGER NOT NULL,
    covariate_id INTEGER NOT NULL,
    text TEXT NOT NULL,
    correct BOOLEAN NOT NULL,
    PRIMARY KEY (run_id, query_form_id, fact_id)
);

CREATE TABLE closed_book_attribute (
    run_id INTEGER NOT NULL,
    relation_id INTEGER NOT NULL,
    entity_id INTEGER NOT NULL,
    query_form_id INTEGER NOT NULL,
    covariate_id INTEGER NOT NULL,
    text TEXT NOT NULL,
    check_kind TEXT NOT NULL,
    label TEXT NOT NULL,
    PRIMARY KEY (run_id, relation_id, entity_id)
);

CREATE TABLE closed_book_sample (
    run_id INTEGER NOT NULL,
    relation_id INTEGER NOT NULL,
    entity_id INTEGER NOT NULL,
    sample INTEGER NOT NULL,
    query_form_id INTEGER NOT NULL,
    covariate_id INTEGER NOT NULL,
    text TEXT NOT NULL,
    correct BOOLEAN NOT NULL,
    PRIMARY KEY (run_id, relation_id, entity_id, sample)
);

CREATE TABLE context (
    context_id BIGINT NOT NULL,
    sample_id INTEGER NOT NULL,
    relation_id INTEGER NOT NULL,
    ordinal INTEGER NOT NULL,
    context_template_id INTEGER NOT NULL,
    context_type TEXT NOT NULL,
    entity_id INTEGER,
    answer_id INTEGER,
    text TEXT NOT NULL,
    PRIMARY KEY (context_id),
    UNIQUE (sample_id, relation_id, ordinal)
);

CREATE TABLE cooccurrence_fact (
    covariate_id INTEGER NOT NULL,
    fact_id INTEGER NOT NULL,
    entity_name_id INTEGER,
    answer_name_id INTEGER,
    pair_id INTEGER,
    PRIMARY KEY (covariate_id, fact_id)
);

CREATE TABLE dynamicqa_alias (
    fact_id INTEGER NOT NULL,
    ordinal INTEGER NOT NULL,
    alias TEXT NOT NULL,
    PRIMARY KEY (fact_id, ordinal)
);

CREATE TABLE dynamicqa_fact (
    fact_id INTEGER NOT NULL,
    dataset_id INTEGER NOT NULL,
    partition TEXT NOT NULL,
    source_id BIGINT NOT NULL,
    source_row INTEGER NOT NULL,
    source_index BIGINT,
    relation_label TEXT,
    relation_qid TEXT,
    subject_qid TEXT,
    object_qid TEXT,
    counter_answer_id INTEGER NOT NULL,
    num_edits DOUBLE PRECISION NOT NULL,
    s_pop DOUBLE PRECISION,
    o_pop DOUBLE PRECISION,
    s_pop_new DOUBLE PRECISION,
    o_pop_new DOUBLE PRECISION,
    replace_quality DOUBLE PRECISION,
    dir_info TEXT,
    question TEXT NOT NULL,
    context TEXT NOT NULL,
    context_template TEXT NOT NULL,
    mask_count INTEGER NOT NULL,
    mask_kind TEXT NOT NULL,
    PRIMARY KEY (fact_id),
    UNIQUE (dataset_id, partition, source_id)
);

CREATE TABLE dynamicqa_fact_done (
    run_id INTEGER NOT NULL,
    fact_id INTEGER NOT NULL,
    seconds DOUBLE PRECISION,
    finished_at TIMESTAMP WITHOUT TIME ZONE NOT NULL,
    PRIMARY KEY (run_id, fact_id)
);

CREATE TABLE dynamicqa_generation (
    run_id INTEGER NOT NULL,
    fact_id INTEGER NOT NULL,
    condition TEXT NOT NULL,
    sample_index INTEGER NOT NULL,
    text TEXT NOT NULL,
    raw_text TEXT NOT NULL,
    logprob_sum DOUBLE PRECISION NOT NULL,
    n_tokens INTEGER NOT NULL,
    cluster INTEGER,
    dist_topk_mass DOUBLE PRECISION,
    matches_gold BOOLEAN NOT NULL,
    matches_counter BOOLEAN NOT NULL,
    PRIMARY KEY (run_id, fact_id, condition, sample_index)
);

CREATE TABLE dynamicqa_regression (
    run_id INTEGER NOT NULL,
    predictor TEXT NOT NULL,
    model TEXT NOT NULL,
    coef DOUBLE PRECISION NOT NULL,
    std_err DOUBLE PRECISION NOT NULL,
    t_value DOUBLE PRECISION NOT NULL,
    p_value DOUBLE PRECISION NOT NULL,
    n_obs INTEGER NOT NULL,
    r_squared DOUBLE PRECISION NOT NULL,
    created_at TIMESTAMP WITHOUT TIME ZONE NOT NULL,
    PRIMARY KEY (run_id, predictor)
);

CREATE TABLE dynamicqa_score (
    run_id INTEGER NOT NULL,
    fact_id INTEGER NOT NULL,
    condition TEXT NOT NULL,
    n_samples INTEGER NOT NULL,
    n_clusters INTEGER NOT NULL,
    semantic_entropy DOUBLE PRECISION NOT NULL,
    semantic_entropy_mc DOUBLE PRECISION NOT NULL,
    cp DOUBLE PRECISION,
    context_answer TEXT,
    greedy_answer TEXT NOT NULL,
    greedy_matches_gold BOOLEAN NOT NULL,
    greedy_matches_context BOOLEAN,
    sample_accuracy DOUBLE PRECISION NOT NULL,
    persuaded BOOLEAN,
    stubborn BOOLEAN,
    PRIMARY KEY (run_id, fact_id, condition)
);

CREATE TABLE dynamicqa_summary (
    run_id INTEGER NOT NULL,
    partition TEXT NOT NULL,
    model TEXT NOT NULL,
    n_facts INTEGER NOT NULL,
    n_instances INTEGER NOT NULL,
    pct_persuaded DOUBLE PRECISION,
    pct_stubborn DOUBLE PRECISION,
    accuracy_with_context DOUBLE PRECISION,
    accuracy_without_context DOUBLE PRECISION,
    se_with_context DOUBLE PRECISION,
    se_without_context DOUBLE PRECISION,
    se_mc_with_context DOUBLE PRECISION,
    se_mc_without_context DOUBLE PRECISION,
    cp DOUBLE PRECISION,
    created_at TIMESTAMP WITHOUT TIME ZONE NOT NULL,
    PRIMARY KEY (run_id, partition)
);

CREATE TABLE dynamicqa_token_dist (
    run_id INTEGER NOT NULL,
    fact_id INTEGER NOT NULL,
    condition TEXT NOT NULL,
    sample_index INTEGER NOT NULL,
    rank INTEGER NOT NULL,
    token_id INTEGER NOT NULL,
    prob DOUBLE PRECISION NOT NULL,
    PRIMARY KEY (run_id, fact_id, condition, sample_index, rank)
);

CREATE TABLE fake_generation_fact (
    generation_id INTEGER NOT NULL,
    fact_id INTEGER NOT NULL,
    entity_id INTEGER NOT NULL,
    position INTEGER NOT NULL,
    class_name TEXT,
    call_index INTEGER,
    raw_name TEXT NOT NULL,
    PRIMARY KEY (generation_id, fact_id)
);

CREATE TABLE fixed_context (
    context_template_id INTEGER NOT NULL,
    fact_id INTEGER NOT NULL,
    dataset_id INTEGER NOT NULL,
    ordinal INTEGER NOT NULL,
    label TEXT NOT NULL,
    context_type TEXT NOT NULL,
    answer_id INTEGER,
    source_row INTEGER NOT NULL,
    text TEXT NOT NULL,
    PRIMARY KEY (context_template_id)
);

CREATE TABLE fixed_item (
    fact_id INTEGER NOT NULL,
    dataset_id INTEGER NOT NULL,
    relation_id INTEGER NOT NULL,
    item_key TEXT NOT NULL,
    source_row INTEGER NOT NULL,
    question TEXT NOT NULL,
    gold_answer_id INTEGER NOT NULL,
    PRIMARY KEY (fact_id)
);

CREATE TABLE prior_topk (
    run_id INTEGER NOT NULL,
    query_form_id INTEGER NOT NULL,
    fact_id INTEGER NOT NULL,
    rank INTEGER NOT NULL,
    token_id INTEGER NOT NULL,
    token TEXT NOT NULL,
    prob DOUBLE PRECISION NOT NULL,
    PRIMARY KEY (run_id, query_form_id, fact_id, rank)
);

CREATE TABLE run_unit (
    run_id INTEGER NOT NULL,
    unit_id INTEGER NOT NULL,
    relation_id INTEGER,
    query_form_id INTEGER,
    shard INTEGER,
    status TEXT NOT NULL,
    n_prompts BIGINT,
    attempts INTEGER,
    worker TEXT,
    error TEXT,
    seconds DOUBLE PRECISION,
    finished_at TIMESTAMP WITHOUT TIME ZONE,
    PRIMARY KEY (run_id, unit_id)
);

CREATE TABLE run_unit_engine (
    run_id INTEGER NOT NULL,
    unit_id INTEGER NOT NULL,
    device TEXT,
    batch_size INTEGER,
    oom_splits INTEGER,
    forward_calls INTEGER,
    tokens BIGINT,
    prefix_reuse TEXT,
    head TEXT,
    PRIMARY KEY (run_id, unit_id)
);

CREATE TABLE sample_fact (
    sample_id INTEGER NOT NULL,
    fact_id INTEGER NOT NULL,
    relation_id INTEGER NOT NULL,
    ordinal INTEGER NOT NULL,
    PRIMARY KEY (sample_id, fact_id)
);

CREATE TABLE susceptibility (
    run_id INTEGER NOT NULL,
    query_form_id INTEGER NOT NULL,
    fact_id INTEGER NOT NULL,
    susceptibility DOUBLE PRECISION NOT NULL,
    mixture_entropy DOUBLE PRECISION NOT NULL,
    mean_conditional_entropy DOUBLE PRECISION NOT NULL,
    n_contexts INTEGER NOT NULL,
    prior_entropy DOUBLE PRECISION,
    prior_kl DOUBLE PRECISION,
    PRIMARY KEY (run_id, query_form_id, fact_id)
);

CREATE TABLE susceptibility_layer (
    run_id INTEGER NOT NULL,
    query_form_id INTEGER NOT NULL,
    fact_id INTEGER NOT NULL,
    layer INTEGER NOT NULL,
    susceptibility DOUBLE PRECISION NOT NULL,
    mixture_entropy DOUBLE PRECISION NOT NULL,
    mean_conditional_entropy DOUBLE PRECISION NOT NULL,
    PRIMARY KEY (run_id, query_form_id, fact_id, layer)
);

CREATE TABLE dynamicqa_context (
    context_id BIGINT NOT NULL,
    sample_id INTEGER NOT NULL,
    fact_id INTEGER NOT NULL,
    condition TEXT NOT NULL,
    PRIMARY KEY (context_id),
    UNIQUE (sample_id, fact_id, condition)
);

CREATE TABLE generation (
    run_id INTEGER NOT NULL,
    query_form_id INTEGER NOT NULL,
    fact_id INTEGER NOT NULL,
    context_id BIGINT NOT NULL,
    text TEXT NOT NULL,
    label TEXT NOT NULL
);

CREATE TABLE persuasion (
    run_id INTEGER NOT NULL,
    query_form_id INTEGER NOT NULL,
    fact_id INTEGER NOT NULL,
    context_id BIGINT NOT NULL,
    persuasion DOUBLE PRECISION NOT NULL,
    entropy DOUBLE PRECISION NOT NULL
);

CREATE TABLE persuasion_layer (
    run_id INTEGER NOT NULL,
    query_form_id INTEGER NOT NULL,
    fact_id INTEGER NOT NULL,
    context_id BIGINT NOT NULL,
    layer INTEGER NOT NULL,
    persuasion DOUBLE PRECISION NOT NULL
);

CREATE TABLE prompt_topk (
    run_id INTEGER NOT NULL,
    query_form_id INTEGER NOT NULL,
    fact_id INTEGER NOT NULL,
    context_id BIGINT NOT NULL,
    rank INTEGER NOT NULL,
    token_id INTEGER NOT NULL,
    token TEXT NOT NULL,
    prob DOUBLE PRECISION NOT NULL
);

CREATE TABLE reliance (
    run_id INTEGER NOT NULL,
    query_form_id INTEGER NOT NULL,
    fact_id INTEGER NOT NULL,
    context_id BIGINT NOT NULL,
    shift DOUBLE PRECISION,
    jsd DOUBLE PRECISION,
    confidence_gain DOUBLE PRECISION,
    confidence_gain_vocab DOUBLE PRECISION,
    p_context_answer DOUBLE PRECISION,
    p_gold_answer DOUBLE PRECISION,
    p_prior_answer DOUBLE PRECISION NOT NULL,
    scaled_difference DOUBLE PRECISION,
    scaled_difference_memory DOUBLE PRECISION,
    answer_top INTEGER NOT NULL,
    answer_prior INTEGER NOT NULL,
    answer_context INTEGER,
    answer_gold INTEGER,
    outcome TEXT,
    outcome_source TEXT,
    choice TEXT,
    choice_source TEXT,
    collision BOOLEAN,
    keeps_prior BOOLEAN NOT NULL,
    shift_answer_set DOUBLE PRECISION,
    jsd_answer_set DOUBLE PRECISION,
    confidence_gain_answer_set DOUBLE PRECISION,
    scaled_difference_answer_set DOUBLE PRECISION,
    scaled_difference_memory_answer_set DOUBLE PRECISION
);
