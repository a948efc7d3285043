"""A chat tokenizer for the tests (no download): a small byte-level BPE with ChatML's
<|im_start|> / <|im_end|> special tokens and a chat template."""

from __future__ import annotations

TEMPLATE = (
    "{% for m in messages %}{% if loop.first and m['role'] != 'system' %}"
    "{{ '<|im_start|>system\nYou are a helpful assistant<|im_end|>\n' }}{% endif %}"
    "{{ '<|im_start|>' + m['role'] + '\n' + m['content'] + '<|im_end|>\n' }}{% endfor %}"
    "{% if add_generation_prompt %}{{ '<|im_start|>assistant\n' }}{% endif %}"
)
TRIM = TEMPLATE.replace("m['content']", "(m['content'] | trim)")
CORPUS = [
    "The capital of France is Paris.\n",
    "The capital of Italy is not Rome.\n",
    "Q: What is the capital of Spain?\nA:",
    "You are a helpful assistant system user",
    "Zorblax Quentaria Madrid Lima Cairo",
] * 5


def _tokenizer(template: str | None = TEMPLATE, bos: bool = False):
    """A small byte-level BPE with <|im_start|> / <|im_end|> special tokens (no download)."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, processors, trainers
    from transformers import PreTrainedTokenizerFast

    tk = Tokenizer(models.BPE())
    tk.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tk.decoder = decoders.ByteLevel()
    tr = trainers.BpeTrainer(
        vocab_size=400,
        special_tokens=["<eos>", "<bos>", "<|im_start|>", "<|im_end|>"],
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
    )
    tk.train_from_iterator(CORPUS, tr)
    if bos:  # a Llama-style tokenizer: BOS added in front of every encoding
        tk.post_processor = processors.TemplateProcessing(single="<bos> $A", special_tokens=[("<bos>", 1)])
    tok = PreTrainedTokenizerFast(
        tokenizer_object=tk,
        eos_token="<eos>",
        pad_token="<eos>",
        bos_token="<bos>",
        additional_special_tokens=["<|im_start|>", "<|im_end|>"],
    )
    tok.chat_template = template
    return tok
