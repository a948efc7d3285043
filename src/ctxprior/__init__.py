"""ctxprior: how much does a language model follow its context versus its prior?"""

__version__ = "0.1.0"
